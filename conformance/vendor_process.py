"""The vendor process: a child process, started with ``spawn``, in which every
call into the vendor's code runs (``conformance.vendor_worker``).

``pebble.ProcessPool`` with one worker does the process management: it
reports a worker killed by a signal as ``ProcessExpired`` with the exit code,
kills a task that overruns its timeout, and starts a fresh worker for the next
task. This module turns those into check results:

- the vendor's code raised: ``CheckFailed`` naming the step and the exception;
- the process died: ``VendorCrashed``: "crashed with SIGSEGV in execute of
  sample 'mlp'", with the last lines the runtime logged;
- the timeout passed: ``VendorTimedOut``: "timed out after 120 s in load of
  sample 'mlp'", with the last lines logged.

The state of a dead worker (loaded runtime, made samples) is gone; the next
task starts from a fresh process, and the caller keeps what it needs (the
Context memoizes every result in the parent).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import multiprocessing
import signal
from pathlib import Path
from typing import Any

import pebble

from conformance import vendor_worker
from conformance.outcomes import CheckFailed, VendorCrashed, VendorTimedOut

#: How long the vendor process may take to start (import torch, executorch and the descriptor).
STARTUP_TIMEOUT_S = 300.0
#: Lines of the runtime's log quoted in a reason.
LOG_LINES = 6


def signal_name(exitcode: int | None) -> str:
    """'SIGSEGV' for -11, 'exit code 3' for 3."""
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


def read_log(path: Path) -> tuple[str | None, list[str]]:
    """(the last step marked in a task's log, the other lines it holds, faulthandler's dump left out)."""
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return None, []
    last_step, lines = None, []
    for line in text.splitlines():
        if line.startswith(vendor_worker.STEP_MARKER):
            last_step = line[len(vendor_worker.STEP_MARKER) :]
        elif line.startswith(("Fatal Python error:", "Current thread", "Thread 0x")):
            break
        elif line.strip():
            lines.append(line.rstrip())
    return last_step, lines


def quote_log(lines: list[str], limit: int = LOG_LINES) -> str:
    """'; the runtime logged: a | b' for the last ``limit`` lines, or ''."""
    if not lines:
        return ""
    shown = [line if len(line) <= 300 else line[:299] + "…" for line in lines[-limit:]]
    return "; the runtime logged: " + " | ".join(shown)


class VendorProcess:
    """One child process for the vendor's code, restarted after a crash or a timeout."""

    def __init__(self, spec: str | bytes, scratch: Path, log_path: Path | None = None) -> None:
        """``spec``: an entry point name or 'module:attr' of the descriptor, or the descriptor pickled
        with cloudpickle (functions of importable modules by reference, others by value)."""
        self.spec = spec
        self.scratch = scratch
        self._pool: pebble.ProcessPool | None = None
        self._counter = itertools.count()
        self.worker_log = log_path or scratch / "vendor-process.log"
        self.restarts = 0

    def _ensure_pool(self) -> pebble.ProcessPool:
        if self._pool is None:
            self._pool = pebble.ProcessPool(
                max_workers=1,
                initializer=vendor_worker.initialize,
                initargs=(self.spec, str(self.worker_log)),
                context=multiprocessing.get_context("spawn"),
            )
        return self._pool

    def call(self, task: str, *args: Any, what: str, timeout: float) -> Any:
        """Runs ``vendor_worker.<task>(*args)`` in the vendor process; ``what`` names it in messages."""
        return self._run(task, args, what, timeout)[0]

    def call_with_log(self, task: str, *args: Any, what: str, timeout: float) -> tuple[Any, str]:
        """Like ``call``, and also returns what the task logged (the runtime's log lines)."""
        result, lines = self._run(task, args, what, timeout)
        return result, "\n".join(lines)

    def _run(self, task: str, args: tuple, what: str, timeout: float) -> tuple[Any, list[str]]:
        log = self.scratch / f"task-{next(self._counter)}.log"
        try:
            future = self._ensure_pool().schedule(
                vendor_worker.run_task, args=(task, str(log), *args), timeout=timeout
            )
            try:
                result = self._result(future, timeout)
            except pebble.ProcessExpired as exc:
                step, lines = read_log(log)
                self.restarts += 1
                raise VendorCrashed(
                    f"crashed with {signal_name(exc.exitcode)} in {step or what}{quote_log(lines)}"
                ) from None
            except concurrent.futures.TimeoutError:
                step, lines = read_log(log)
                self.restarts += 1
                raise VendorTimedOut(
                    f"timed out after {timeout:.3g} s in {step or what}{quote_log(lines)}"
                ) from None
            except vendor_worker.VendorError as exc:
                _, lines = read_log(log)
                raise CheckFailed(f"{exc}{quote_log(lines)}") from None
            return result, read_log(log)[1]
        finally:
            log.unlink(missing_ok=True)

    def _result(self, future: concurrent.futures.Future, timeout: float) -> Any:
        """The task's result; the first task of a new worker also waits for its start-up (bounded)."""
        try:
            return future.result(timeout=STARTUP_TIMEOUT_S + timeout)
        except concurrent.futures.TimeoutError:
            if future.done():  # pebble's own task timeout
                raise
            self.close()
            raise VendorTimedOut(
                f"the vendor process did not start and answer within {STARTUP_TIMEOUT_S:g} s "
                "(does importing the descriptor hang?)"
            ) from None

    def close(self) -> None:
        """Stops the worker (killing it if it hangs)."""
        if self._pool is not None:
            self._pool.stop()
            with contextlib.suppress(TimeoutError, RuntimeError):
                self._pool.join(timeout=10)
            self._pool = None
