"""The envelope of one task in the vendor process: where its output goes, how
its steps are marked, and how whatever the vendor's code raised becomes one line.

Each task runs with file descriptors 1 and 2 sent to a log file of its own, so
that what the runtime logged survives a crash. Before each step the task
writes the step's description to a second file of its own (``STEPS_SUFFIX``),
which the vendor's output cannot reach, so that the parent can say in which
step a crash or hang happened, and the step with its start time to a third
(``step_times.TIMES_SUFFIX``), from which the parent tells where the time
went; the pid of the process that runs the task goes to a fourth
(``PID_SUFFIX``), which the parent watches.

Contract of every task (``conformance.vendor.task_registry``): it returns plain data,
or raises ``VendorError`` (a one-line message naming what failed), whatever the
vendor's code raised.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.vendor import step_times

#: Where a task's step markers go: its log path with this suffix (see ``step``).
STEPS_SUFFIX = ".steps"
#: The pid of the process that runs a task goes to its log path with this suffix (the parent watches it).
PID_SUFFIX = ".pid"
#: The suite's own modules of the vendor process, left out of the "(at file:line)" of a message.
_OWN_FILES = tuple(
    os.path.join("conformance", "vendor", name) for name in ("bootstrap.py", "envelope.py", "core_tasks.py")
)


class VendorError(Exception):
    """The vendor's code raised; the message names the step and the exception (picklable: one str)."""


class _Steps:
    path: str | None = None
    times: str | None = None

    def __init__(self) -> None:
        #: the ``vendor_call`` steps under way, outermost first
        self.calls: list[str] = []


_steps = _Steps()


def run(log_path: str, call: Callable[[], Any]) -> bytes:
    """Runs ``call`` with fds 1 and 2 sent to ``log_path`` and its step markers written to
    ``log_path + STEPS_SUFFIX`` (a file the vendor's output cannot reach or imitate); see the module
    contract. The result is returned pickled, for ``conformance.vendor.process.load_result``, which
    accepts only the suite's own types."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    _steps.path = log_path + STEPS_SUFFIX
    _steps.times = log_path + step_times.TIMES_SUFFIX
    _steps.calls = []
    Path(log_path + PID_SUFFIX).write_text(str(os.getpid()))
    try:
        return pickle.dumps(call())
    except VendorError as exc:
        raise VendorError(plain(exc.args[0] if exc.args else "")) from None
    except BaseException as exc:  # noqa: BLE001
        raise VendorError(_safe_one_line(exc)) from None
    finally:
        _steps.path = _steps.times = None
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def plain(text: Any) -> str:
    """``text`` as an exact ``str`` (never a subclass of the vendor's, which would cross the boundary)."""
    try:
        return str.__str__(text) if isinstance(text, str) else str.__str__(str(text))
    except BaseException:  # noqa: BLE001
        return "(a message that could not be turned into text)"


def _safe_one_line(exc: BaseException) -> str:
    try:
        return plain(one_line(exc))
    except BaseException:  # noqa: BLE001  the vendor's __str__ raised in turn
        return plain(f"{type.__getattribute__(type(exc), '__name__')} (its message could not be read)")


def step(what: str) -> None:
    """Marks the start of a step in the task's step file (read by the parent after a crash or hang) and,
    with its start time, in its times file (``step_times``)."""
    if _steps.path is None or _steps.times is None:
        return
    started = time.monotonic()
    for path, text in ((_steps.path, f"{what}\n"), (_steps.times, step_times.line(started, what))):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, text.encode("utf-8", "replace"))
        finally:
            os.close(fd)


def one_line(exc: BaseException) -> str:
    """'Type: message (at file:line)' with the innermost frame outside the suite's vendor-process modules."""
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ").strip()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.endswith(_OWN_FILES)]
    if frames:
        text += f" (at {frames[-1].filename}:{frames[-1].lineno})"
    if isinstance(exc, ImportError):
        from conformance.vendor.import_hints import hint

        found = hint(exc)
        text += f": {found}" if found else ""
    return text


def vendor_call(what: str, fn, *args, **kwargs):
    """Calls the vendor's ``fn``; any exception becomes VendorError('<what> raised <Type>: <msg>'). Its step
    lasts until ``fn`` ends: a call made inside another one's ``fn`` (a partitioner's partition() inside the
    lowering) marks the enclosing call's step again when it ends, so that a crash after it (in the backend's
    preprocess) is not said to be in it."""
    step(what)
    _steps.calls.append(what)
    try:
        return fn(*args, **kwargs)
    except VendorError:
        raise
    except BaseException as exc:  # noqa: BLE001
        raise VendorError(f"{what} raised {one_line(exc)}") from None
    finally:
        _steps.calls.pop()
        if _steps.calls:
            step(f"{_steps.calls[-1]} (after {what} ended)")
