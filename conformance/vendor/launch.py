"""How a vendor process is started and how none outlives the process that judges.

A ``spawn`` child runs Python code of multiprocessing's before the pool's initializer can point its
output at the vendor log (``bootstrap.initialize``): unpickling its arguments, importing modules.
Whatever it prints in that window (a traceback when the pool is torn down under it, a
``KeyboardInterrupt`` when Ctrl-C reaches the whole terminal group) would land on the user's terminal,
and a child that outlives the run would keep the terminal's pipe open. So every vendor process is
started through a small ``/bin/sh`` launcher (``multiprocessing.set_executable``; the standard
library has no per-context executable) that, before it execs this interpreter:

- sends stdin from ``/dev/null`` and stdout/stderr to the vendor log;
- ignores SIGINT: the process that judges decides what a Ctrl-C does (it stops the vendor
  processes itself), so the signal the terminal sends to its whole group never reaches the vendor's code;
- for a process that makes gigabytes (``huge_pages``: NDATA-5's program), adds ``glibc.malloc.hugetlb=1``
  to ``GLIBC_TUNABLES``: glibc (2.35 and later; others ignore it) then backs its large allocations with
  transparent huge pages where the kernel offers them on request (``madvise`` mode), which takes a page
  fault per 2 MiB instead of per 4 KiB. Measured on NDATA-5's program of 4.25 GiB: 33-39 s -> 22-24 s.

``kill_leftovers`` (also run at exit) kills any vendor process still alive. multiprocessing joins its
non-daemon children at exit, and pebble's workers are non-daemon: one left hanging in the vendor's
code would otherwise keep the run from ever ending.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import multiprocessing
import multiprocessing.process
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

from conformance.vendor import interpreter as vendor_interpreter

#: The name pebble gives its worker processes (``pebble.pool.process.WORKERS_NAME``).
WORKER_NAME = "pebble_pool_worker"

_launchers: dict[str, Path] = {}


def _launcher_dir() -> Path:
    if "dir" not in _launchers:
        _launchers["dir"] = Path(tempfile.mkdtemp(prefix="conformance-launch-"))
        atexit.register(_clean_up)
    return _launchers["dir"]


#: The glibc tunable of a ``huge_pages`` vendor process (see the module contract).
HUGE_PAGES_TUNABLE = "glibc.malloc.hugetlb=1"


def use_launcher(log_path: Path, huge_pages: bool = False) -> None:
    """Makes the ``spawn`` children started from now on run through a launcher whose output goes to
    ``log_path`` and which ignores SIGINT (see the module contract), with the vendor's interpreter
    (``vendor_interpreter.current()``, else this one); ``huge_pages``: with ``HUGE_PAGES_TUNABLE``."""
    interpreter = vendor_interpreter.current()
    python = interpreter.path if interpreter is not None else sys.executable
    key = f"{log_path}\0{python}\0{huge_pages}"
    if key not in _launchers:
        name = hashlib.sha256(key.encode(errors="surrogateescape")).hexdigest()[:16]
        launcher = _launcher_dir() / f"python-{name}"
        launcher.write_text(
            "#!/bin/sh\n"
            "trap '' INT\n"
            f"exec </dev/null >>{shlex.quote(str(log_path))} 2>&1\n"
            + _vendor_environment(interpreter, huge_pages)
            + f'{shlex.quote(python)} "$@"\n',
            errors="surrogateescape",
        )
        launcher.chmod(0o755)
        _launchers[key] = launcher
    multiprocessing.get_context("spawn").set_executable(str(_launchers[key]))


#: The variable that carries the vendor's import path into a vendor process started by the judge.
VENDOR_SYS_PATH = "EXECUTORCH_CONFORMANCE_VENDOR_SYS_PATH"


def _with_tunable(value: str | None) -> str:
    """``GLIBC_TUNABLES``'s value ``value`` (None: unset) with ``HUGE_PAGES_TUNABLE`` added."""
    return f"{value}:{HUGE_PAGES_TUNABLE}" if value else HUGE_PAGES_TUNABLE


def _vendor_environment(interpreter: vendor_interpreter.VendorInterpreter | None, huge_pages: bool) -> str:
    """The launcher lines that start the vendor process in the vendor's environment, in the isolated judge
    (conformance/judge/environment.py) or with the vendor's own ``interpreter``: without the judge's
    -I and -S (multiprocessing repeats the interpreter's flags), with the vendor's variables only (in the
    judge), and the vendor's import path (the interpreter's, else the one the judge was started with) in
    VENDOR_SYS_PATH (``bootstrap.initialize`` restores it: spawn gives a child its parent's path).
    Neither: none. ``huge_pages``: with ``HUGE_PAGES_TUNABLE`` added to the vendor's GLIBC_TUNABLES."""
    from conformance.judge.environment import vendor_state

    state = vendor_state()
    if state is None and interpreter is None:
        if huge_pages:
            return f'GLIBC_TUNABLES="${{GLIBC_TUNABLES:+$GLIBC_TUNABLES:}}{HUGE_PAGES_TUNABLE}"\nexport GLIBC_TUNABLES\nexec '
        return "exec "
    import json

    if interpreter is not None:
        path = list(interpreter.sys_path)
    else:
        assert state is not None
        path = state["sys_path"]
    variables = {**(state["environ"] if state else {}), VENDOR_SYS_PATH: json.dumps(path)}
    if huge_pages:
        own = variables.get("GLIBC_TUNABLES") if state else os.environ.get("GLIBC_TUNABLES")
        variables["GLIBC_TUNABLES"] = _with_tunable(own)
    assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(variables.items()) if "=" not in k)
    return (
        'for arg do shift; case "$arg" in -I|-S) ;; *) set -- "$@" "$arg" ;; esac; done\n'
        f"exec /usr/bin/env {'-i ' if state else ''}{assignments} \\\n  "
    )


def kill_leftovers() -> None:
    """Kills (SIGKILL) and reaps every vendor process of this process that is still alive."""
    for child in multiprocessing.process.active_children():
        if child.name.startswith(WORKER_NAME):
            with contextlib.suppress(OSError, ValueError, AssertionError):
                child.kill()
                child.join(5)


def _clean_up() -> None:
    kill_leftovers()
    multiprocessing.get_context("spawn").set_executable(sys.executable)
    made = _launchers.pop("dir", None)  # None: cleaned up already (the handler can be registered twice)
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
