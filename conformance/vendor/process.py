"""The vendor process: a child process, started with ``spawn``, in which every
call into the vendor's code runs (``conformance.vendor.bootstrap``).

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
import io
import itertools
import multiprocessing
import os
import pickle
import re
import signal
import tempfile
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, ClassVar

import pebble

from conformance.outcomes import CheckFailed, VendorCrashed, VendorTimedOut
from conformance.vendor import bootstrap, envelope, step_times
from conformance.vendor.launch import use_launcher

#: How long the vendor process may take to start (import torch, executorch and the descriptor).
STARTUP_TIMEOUT_S = 300.0


def default_memory_limit() -> int | None:
    """Three quarters of the machine's memory, in bytes (None where it cannot be read): the most data
    memory (RLIMIT_DATA) a vendor process may allocate unless the run says otherwise. A runtime that
    allocates without bound fails its own task (MemoryError, a failed allocation) instead of waking the
    OOM killer, which may pick the process that judges."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 3 // 4)
    except (AttributeError, OSError, ValueError):
        return None


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


#: The most of a task's log the parent reads (its end): a runtime that logs gigabytes costs no memory.
LOG_TAIL_BYTES = 64 * 1024


def read_log(path: Path) -> tuple[str | None, list[str]]:
    """(the last step the task marked, the lines at the end of its log, faulthandler's dump left out).
    Only the last ``LOG_TAIL_BYTES`` of the log are read; the steps come from a file of their own
    (``envelope.STEPS_SUFFIX``), so nothing the vendor's code prints can pass for one."""
    return _last_step(Path(f"{path}{envelope.STEPS_SUFFIX}")), _tail_lines(path)


def read_runner_log(results: Path) -> tuple[str | None, list[str]]:
    """Like ``read_log`` for the conformance runner's results directory from a target: the steps are in
    ``steps.txt`` (a file the runner writes itself, apart from what the backend logs), the log in
    ``log.txt``, of which only the last ``LOG_TAIL_BYTES`` are read."""
    return _last_step(results / "steps.txt"), _tail_lines(results / "log.txt")


def _tail(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - limit))
            data = f.read(limit)
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    return text.split("\n", 1)[-1] if size > limit else text  # the first line may be cut


def _last_step(path: Path) -> str | None:
    lines = [line for line in _tail(path, 4096).splitlines() if line.strip()]
    return lines[-1] if lines else None


def _tail_lines(path: Path) -> list[str]:
    lines = []
    for line in _tail(path, LOG_TAIL_BYTES).splitlines():
        if line.startswith(("Fatal Python error:", "Current thread", "Thread 0x")):
            break
        if line.strip():
            lines.append(line.rstrip())
    return lines


#: What a task's result may be made of (``load_result``): plain data and the suite's own records.
_RESULT_TYPES = {
    ("builtins", name) for name in ("frozenset", "set", "bytearray", "complex", "slice", "range")
} | {("conformance.vendor.records", name) for name in ("Lowering", "PartitionRecord", "RuntimeLoad")}


class _ResultUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _RESULT_TYPES or module.startswith("conformance.vendor.capability_tasks"):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name}")


def load_result(data: Any, what: str) -> Any:
    """A task's pickled result, rebuilt only from plain data and the suite's records: an object of any
    other type (the vendor's own str subclass, say) would run the vendor's code in this process, so it
    is refused as a failure of the step that returned it."""
    if not isinstance(data, bytes):
        raise CheckFailed(f"{what}: the vendor process answered with {type(data).__name__}, not a result")
    try:
        return _ResultUnpickler(io.BytesIO(data)).load()
    except Exception as exc:  # noqa: BLE001  whatever came back is no result
        raise CheckFailed(
            f"{what} returned an object of type {exc} where the suite expects plain data "
            "(str, bytes, numbers); return built-in types"
        ) from None


#: How often a waiting call looks at the vendor process, and how long after it was reaped unseen it gives
#: pebble to report its end before taking it for an exit with status 0.
POLL_S = 0.5
#: How long the vendor process must stay alive, idle, after the run's last task (``check_alive``).
LIVENESS_GRACE_S = 3.0
EXIT_GRACE_S = 10.0


def _task_pid(log: Path) -> int | None:
    try:
        return int(Path(f"{log}{envelope.PID_SUFFIX}").read_text())
    except (OSError, ValueError):
        return None


def _exit_status(pid: int) -> int | str | None:
    """How process ``pid`` stands: None while it runs (or where /proc cannot tell), its wait status
    while it is a zombie (dead, not yet reaped by pebble), 'gone' once reaped."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[-1].split()
    except FileNotFoundError:
        return "gone"
    except OSError:
        return None
    if fields[:1] not in ([b"Z"], [b"X"]):
        return None
    try:
        return int(fields[49])  # field 52, exit_code (Linux 3.5 and later)
    except (IndexError, ValueError):
        return None


def grace_left(grace_s: float, idle_since: float | None, now: float) -> float:
    """Seconds the liveness check still waits at ``now`` for a process idle since ``idle_since`` (None: it
    has not been seen idle) to have been idle ``grace_s``: what a run spent after the last task (checks
    that call no vendor code, waiting for work started ahead) counts."""
    if idle_since is None:
        return grace_s
    return min(grace_s, max(0.0, grace_s - (now - idle_since)))


def step_what(log: Path, what: str) -> str:
    """The last step a task marked, or ``what``."""
    return _last_step(Path(f"{log}{envelope.STEPS_SUFFIX}")) or what


#: A warning Python's ``warnings`` module printed ("<file>.py:105: FutureWarning: ..."); the next line, when
#: indented, is the source line it quotes.
_PYTHON_WARNING = re.compile(r"^\S.*\.py:\d+: [A-Za-z]*Warning: ")
#: What ExecuTorch's runtime logs of the host's CPU when its pybindings start (cpuinfo_utils.cpp: the files
#: of ARM CPUs it probes on every machine), never about a backend.
_CPU_PROBE = re.compile(r"^\[cpuinfo_utils\.cpp:\d+\] ")


def backend_lines(lines: list[str]) -> list[str]:
    """The lines of a vendor process's log that can be the backend's own messages: without the warnings
    Python libraries print (torch's deprecation notices, each with its quoted source line), without the
    runtime's probe of the host's CPU, and without repeats (each line once, where it last appeared). They
    stay in the log file."""
    kept: list[str] = []
    skip_source = False
    for line in lines:
        if _PYTHON_WARNING.match(line):
            skip_source = True
            continue
        if skip_source and line[:1].isspace():
            skip_source = False
            continue
        skip_source = False
        if line.strip() and not _CPU_PROBE.match(line):
            kept.append(line)
    last = {line: at for at, line in enumerate(kept)}
    return [line for at, line in enumerate(kept) if last[line] == at]


def quote_log(lines: list[str], limit: int = LOG_LINES) -> str:
    """'; the runtime logged: a | b' for the last ``limit`` of ``backend_lines(lines)``, or ''."""
    lines = backend_lines(lines)
    if not lines:
        return ""
    shown = [line if len(line) <= 300 else line[:299] + "…" for line in lines[-limit:]]
    return "; the runtime logged: " + " | ".join(shown)


#: The steps of a task whose time is not charged to its timeout (each has the whole timeout of its own):
#: loading a program, during which the runtime's init() runs for each delegate.
LOAD_STEP = step_times.LOAD_STEP


class TaskClock:
    """A task's time, polled: what it spent outside load steps must stay within ``timeout``, and each load
    step (``LOAD_STEP``, told apart by its text) within ``timeout`` of its own. A step shorter than one poll
    may go unseen, and is then charged: the clock errs towards the timeout, never past it."""

    def __init__(self, started: float, timeout: float) -> None:
        self.started = started
        self.timeout = timeout
        self.load_s = 0.0
        self.load: str | None = None
        self.load_since = started

    def expired(self, now: float, step: str | None) -> bool:
        """Whether the task is past its time at ``now``, ``step`` being the last step it marked."""
        loading = step if step is not None and step.startswith(LOAD_STEP) else None
        if loading != self.load:
            if self.load is not None:
                self.load_s += now - self.load_since
            self.load, self.load_since = loading, now
        if self.load is not None and now - self.load_since > self.timeout:
            return True
        current = now - self.load_since if self.load is not None else 0.0
        return now - self.started - self.load_s - current > self.timeout


class VendorProcess:
    """One child process for the vendor's code, restarted after a crash or a timeout."""

    #: vendor processes started by this process so far (first starts and restarts; what tests count)
    starts: ClassVar[int] = 0

    def __init__(
        self,
        spec: str | bytes,
        scratch: Path | None = None,
        log_path: Path | None = None,
        memory_bytes: int | None = None,
        huge_pages: bool = False,
    ) -> None:
        """``spec``: an entry point name or 'module:attr' of the descriptor, or the descriptor pickled
        with cloudpickle (functions of importable modules by reference, others by value). ``scratch``:
        where the tasks' logs go, made if missing (default: a temporary directory of its own, removed by
        ``close``).
        ``memory_bytes``: the most data memory the process may allocate (default:
        ``default_memory_limit()``). ``huge_pages``: for tasks that make gigabytes, malloc backs large
        allocations with transparent huge pages (``launch``)."""
        self.spec = spec
        self.huge_pages = huge_pages
        self.memory_bytes = memory_bytes if memory_bytes is not None else default_memory_limit()
        self._own_scratch = None
        if scratch is None:
            self._own_scratch = tempfile.TemporaryDirectory(prefix="conformance-vendor-")
            scratch = Path(self._own_scratch.name)
        scratch.mkdir(parents=True, exist_ok=True)  # the process's log is written there before any task
        self.scratch: Path = scratch
        self._pool: pebble.ProcessPool | None = None
        self._counter = itertools.count()
        self.worker_log = log_path or scratch / "vendor-process.log"
        self.restarts = 0
        self._last_step: str | None = None  # the last step of the last task that answered
        self._idle_since: float | None = None  # time.monotonic() when the last task ended
        #: seconds of every task so far, by kind of step (``step_times``): init, execute, lowering
        self.step_seconds: dict[str, float] = {}

    def _ensure_pool(self) -> pebble.ProcessPool:
        if self._pool is None:
            VendorProcess.starts += 1
            use_launcher(self.worker_log, self.huge_pages)
            self._pool = pebble.ProcessPool(
                max_workers=1,
                initializer=bootstrap.initialize,
                initargs=(self.spec, str(self.worker_log), self.memory_bytes),
                context=multiprocessing.get_context("spawn"),
            )
        return self._pool

    def call(self, task: str, *args: Any, what: str, timeout: float) -> Any:
        """Runs the task called ``task`` (``conformance.vendor.task_registry``) in the vendor process; ``what`` names it in messages."""
        return self._run(task, args, what, timeout)[0]

    def call_with_log(self, task: str, *args: Any, what: str, timeout: float) -> tuple[Any, str]:
        """Like ``call``, and also returns what the task logged (the runtime's log lines)."""
        result, lines = self._run(task, args, what, timeout)
        return result, "\n".join(lines)

    def _run(self, task: str, args: tuple, what: str, timeout: float) -> tuple[Any, list[str]]:
        log = self.scratch / f"task-{next(self._counter)}.log"
        try:
            try:
                # No pebble timeout: _result keeps the clock, which stops while the task loads a program.
                future = self._ensure_pool().schedule(bootstrap.run_task, args=(task, str(log), *args))
            except RuntimeError:  # pebble: "Unexpected error within the Pool", see _died_idle
                raise self._died_idle() from None
            try:
                result = self._result(future, timeout, log)
            except BrokenProcessPool:
                raise self._died_idle() from None
            except pebble.ProcessExpired as exc:
                step, lines = read_log(log)
                self._restart()
                raise VendorCrashed(
                    f"crashed with {signal_name(exc.exitcode)} in {step or what}{quote_log(lines)}"
                ) from None
            except concurrent.futures.TimeoutError:
                step, lines = read_log(log)
                self._restart()
                raise VendorTimedOut(
                    f"timed out after {timeout:.3g} s in {step or what}{quote_log(lines)}"
                ) from None
            except envelope.VendorError as exc:
                _, lines = read_log(log)
                raise CheckFailed(f"{exc}{quote_log(lines)}") from None
            self._last_step = step_what(log, what)
            return load_result(result, self._last_step), read_log(log)[1]
        finally:
            self._idle_since = time.monotonic()
            times = Path(f"{log}{step_times.TIMES_SUFFIX}")
            step_times.add(self.step_seconds, step_times.read(times, time.monotonic()))
            times.unlink(missing_ok=True)
            log.unlink(missing_ok=True)
            Path(f"{log}{envelope.STEPS_SUFFIX}").unlink(missing_ok=True)
            Path(f"{log}{envelope.PID_SUFFIX}").unlink(missing_ok=True)

    def _died_idle(self) -> VendorCrashed:
        """pebble's pool breaks when its worker dies while it runs no task (a thread or a timer the runtime
        started, a destructor): the call that meets it fails, with what the process logged last."""
        lines = _tail_lines(self.worker_log)
        self._restart()
        return VendorCrashed(
            f"the vendor process died while it ran no task, after {self._last_step or 'its start'} "
            f"(a thread or timer of the runtime's, most likely){quote_log(lines, 2)}"
        )

    def _result(self, future: concurrent.futures.Future, timeout: float, log: Path) -> Any:
        """The task's result, within ``timeout`` seconds of its own time; the first task of a new worker
        also waits for its start-up (bounded).

        The clock (``TaskClock``) does not charge the time the task spends loading programs (a step named
        "load of ...": the runtime's ``init()`` of each delegate, which compiles on many NPUs): each load has
        ``timeout`` seconds of its own instead, so a slow ``init()`` is not a failure and a hanging one still
        times out. Past its time the task's process is stopped and the task ends in TimeoutError.

        pebble reports a worker that died by a signal or with a non-zero status, but takes one that
        exited with status 0 (``os._exit(0)``, C ``exit(0)`` or ``quick_exit`` in the vendor's code) for
        a normal end: so while waiting, this watches the process that took the task (its pid is in the
        task's ``.pid`` file) and reports its exit."""
        startup_deadline = time.monotonic() + STARTUP_TIMEOUT_S + timeout
        pid: int | None = None
        started: float | None = None  # when the task was seen running
        gone_since: float | None = None
        clock: TaskClock | None = None
        steps = Path(f"{log}{envelope.STEPS_SUFFIX}")
        while True:
            try:
                return future.result(timeout=POLL_S)
            except concurrent.futures.TimeoutError:
                if future.done():  # the process was gone well before the task could end
                    if started is not None and gone_since is not None:
                        raise pebble.ProcessExpired("exited", code=0, pid=pid) from None
                    raise
            now = time.monotonic()
            if pid is None:
                if now >= startup_deadline:
                    self._stop()
                    raise VendorTimedOut(
                        f"the vendor process did not start and answer within {STARTUP_TIMEOUT_S:g} s "
                        "(does importing the descriptor hang?)"
                    ) from None
                pid = _task_pid(log)
                if pid is not None:
                    started = now
                    clock = TaskClock(now, timeout)
                continue
            assert clock is not None
            if clock.expired(now, _last_step(steps)):
                self._stop()
                raise concurrent.futures.TimeoutError
            status = _exit_status(pid)
            if status == "gone":  # reaped: pebble reports any status but 0 at once
                gone_since = gone_since or now
            if status == 0 or (gone_since is not None and now - gone_since > EXIT_GRACE_S):
                self._stop()
                raise pebble.ProcessExpired("exited", code=0, pid=pid)

    def _restart(self) -> None:
        """After a crash or a timeout: the next task gets a new pool, with new pipes as well as a new
        process (the vendor's code may have written into the old pipes, or left half a message there,
        and pebble's own replacement worker would share them)."""
        self.restarts += 1
        self._idle_since = None  # the new process's grace starts when the liveness check does
        self._stop()
        self.warm_up()

    def warm_up(self) -> None:
        """Starts the process now, in the background, and has it load the descriptor (a ping), so that
        the next task finds it ready; returns at once. A failure there is met by that next task."""
        warm = self.scratch / f"warm-{next(self._counter)}.log"
        self._ensure_pool().schedule(bootstrap.run_task, args=("ping", str(warm)), timeout=STARTUP_TIMEOUT_S)

    def check_alive(self, grace_s: float | None = None) -> None:
        """The last liveness check, after the run's last task (docs/contract.md, "How the checks run the
        vendor's code"): the vendor process, idle since that task, must still be alive ``grace_s`` later
        and answer. VendorCrashed (or VendorTimedOut) otherwise: a thread or timer of the runtime's that
        kills the process after the last task meets no other check. Nothing if no process was started."""
        if self._pool is None:
            return
        grace = LIVENESS_GRACE_S if grace_s is None else grace_s
        time.sleep(grace_left(grace, self._idle_since, time.monotonic()))
        self._run("ping", (), "the liveness check after the last task", STARTUP_TIMEOUT_S)

    def close(self) -> None:
        """Stops the worker (killing it if it hangs) and removes its own scratch directory."""
        self._stop()
        if self._own_scratch is not None:
            self._own_scratch.cleanup()

    def _stop(self) -> None:
        # Taken first: a process started ahead (Context.ahead) is closed by its own thread when its task
        # ends and by the run when the run ends first, and the two may meet here.
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.stop()
            with contextlib.suppress(TimeoutError, RuntimeError):
                pool.join(timeout=10)
