"""The start of the vendor process (see ``conformance.vendor.process``) and the
entry point of each of its tasks.

Every call into the vendor's code happens in that process, never in the pytest
process: making the sample models and their eager outputs, the partitioners,
export and lowering, loading the runtime library, and every runtime load and
execute. A crash or a hang there takes down only that process; the suite sees
it as a result of the check that made the call.

``initialize`` prepares the process and runs none of the vendor's code. The
descriptor is loaded by the first task of each process, under that task's
timeout (``describe`` gives its data to the process that judges, which never
imports the vendor's modules). ``run_task`` runs one task of
``conformance.vendor.task_registry`` inside the envelope of ``conformance.vendor.envelope``.
"""

from __future__ import annotations

import contextlib
import faulthandler
import importlib
import io
import multiprocessing
import os
import sys
from typing import Any

from conformance.vendor import task_registry
from conformance.vendor.envelope import VendorError, one_line, plain, run, step


class _Process:
    """What the process knows of the vendor: the descriptor's spec, and the descriptor or why it failed."""

    spec: str | bytes = b""
    descriptor: Any = None
    descriptor_error: str | None = None
    descriptor_plain_error: str | None = None
    registered_at_import: tuple[str, ...] | None = None


_process = _Process()


def initialize(spec: str | bytes, log_path: str, memory_limit: int | None = None) -> None:
    """The pool's initializer: sends stdout/stderr to ``log_path``, limits the process's data memory to
    ``memory_limit`` bytes (RLIMIT_DATA) and imports the suite's own heavy modules (torch, executorch).
    Never raises, and runs none of the vendor's code: the descriptor is loaded by the first task
    (``load_descriptor``), under that task's timeout, so that an import that hangs, crashes or exits is
    that task's result."""
    _die_with_parent()
    _limit_memory(memory_limit)
    _restore_vendor_path()
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    # Python-level writes go to the descriptors themselves, so each task's redirection takes them too
    # (ExecuTorch's Python extension sends the C++ log through sys.stderr).
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True, errors="replace")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True, errors="replace")
    faulthandler.enable(file=2, all_threads=False)  # fd 2: the task's own log at the time of a crash
    _process.spec = spec
    with contextlib.suppress(Exception):  # what every descriptor imports; a failure shows at its import
        import executorch.exir
        import executorch.runtime
        import torch  # noqa: F401

        # Before any of the vendor's code: what ExecuTorch's own runtime registered at import (RT-1).
        registry = executorch.runtime.Runtime.get().backend_registry
        _process.registered_at_import = tuple(registry.registered_backend_names)


def run_task(name: str, log_path: str, *args: Any) -> bytes:
    """Runs the task called ``name`` (``conformance.vendor.task_registry``) in its envelope
    (``conformance.vendor.envelope.run``): every task but ``describe`` first loads the descriptor, and
    fails with the reason if it cannot be loaded."""

    def call() -> Any:
        if name != task_registry.DESCRIBE:
            load_descriptor()
            if _process.descriptor_error:
                raise VendorError(_process.descriptor_error)
        return _function(name)(*args)

    return run(log_path, call)


def _function(name: str):
    """The function of the task called ``name``; VendorError for a name the registry does not know."""
    try:
        module, _, function = task_registry.task(name).location.partition(":")
    except task_registry.UnknownTask as exc:
        raise VendorError(str(exc)) from None
    return getattr(importlib.import_module(module), function)


def load_descriptor() -> None:
    """Loads the descriptor (an entry point name or 'module:attr', or a descriptor object pickled with
    cloudpickle) once per process; a failure is kept (``descriptor_failure``)."""
    if _process.descriptor is not None or _process.descriptor_error is not None:
        return
    spec = _process.spec
    label = "the descriptor object" if isinstance(spec, bytes) else f"the descriptor {spec!r}"
    step(f"loading {label} (importing its module)")
    try:
        if isinstance(spec, bytes):
            import cloudpickle

            _process.descriptor = cloudpickle.loads(spec)
        else:
            from conformance.descriptor import load_descriptor as load

            _process.descriptor = load(spec)
    except BaseException as exc:  # noqa: BLE001  (any failure of vendor code is a finding)
        from conformance.descriptor import DescriptorError

        _process.descriptor_plain_error = plain(str(exc)) if isinstance(exc, DescriptorError) else None
        _process.descriptor_error = f"loading {label} in the vendor process failed: {one_line(exc)}"


def descriptor() -> Any:
    """The descriptor of this process (for the tasks)."""
    return _process.descriptor


def descriptor_failure() -> tuple[str | None, str | None]:
    """(why the descriptor could not be loaded, or None; the DescriptorError's own message, or None)."""
    return _process.descriptor_error, _process.descriptor_plain_error


def registered_at_import() -> tuple[str, ...] | None:
    """The backends ExecuTorch's runtime registered when ``initialize`` imported it (None if unobserved)."""
    return _process.registered_at_import


def _restore_vendor_path() -> None:
    """In a vendor process the isolated judge started (conformance/judge/environment.py): the import path
    the vendor's own interpreter computed (its PYTHONPATH, its .pth directories) instead of the judge's,
    which spawn handed down; the judge's entries stay after it, so the suite's modules are still found."""
    import json

    from conformance.vendor.launch import VENDOR_SYS_PATH

    carried = os.environ.pop(VENDOR_SYS_PATH, None)
    if carried is None:
        return
    with contextlib.suppress(ValueError, TypeError):
        vendor = [str(p) for p in json.loads(carried)]
        sys.path[:] = vendor + [p for p in sys.path if p not in vendor]


def _limit_memory(limit: int | None) -> None:
    """Allocations beyond ``limit`` bytes fail in this process (MemoryError, malloc returning NULL)."""
    if limit is None:
        return
    with contextlib.suppress(ImportError, OSError, ValueError):
        import resource

        _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))


def _die_with_parent() -> None:
    """On Linux, the kernel kills this process when the suite's process dies (even by SIGKILL), so a
    hanging vendor call never outlives the run. Elsewhere a no-op."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
        parent = multiprocessing.parent_process()
        if parent is not None and os.getppid() != parent.pid:
            os._exit(1)  # the suite's process died before the line above: nobody is left to answer
