"""Vendor-process task of RT-9 (``task_registry.MEMORY_GROWTH``, judged by ``conformance.checks.runtime``):
how much memory a loaded method keeps taking as it executes, and a program keeps taking as it is loaded
and freed.

Two counts, each before and after a phase, after a garbage collection: the bytes the C allocator has
handed out and not taken back (glibc's ``mallinfo2``: in-use arena bytes plus mmapped chunks, so a
leaked block counts whether or not it was ever touched), and the process's resident set (``psutil``:
memory touched through any allocator, ``mmap`` included). The phases: a method executed ``WARMUP``
times (first-call caches settle), then ``executes`` more times; the program freed, loaded, executed once
and freed again ``cycles`` times. A correct runtime's counts return to where they were, up to the
allocator's noise; one that keeps a buffer per execute, or a handle ``destroy()`` never frees, grows by
that much every time.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from typing import Any

from conformance.vendor.core_tasks import free_programs, load_method, require_runtime
from conformance.vendor.envelope import step
from conformance.vendor.records import unpack

#: Executes before the first count, so that what a runtime allocates once, lazily, is not taken for growth.
WARMUP = 5


class _Mallinfo2(ctypes.Structure):
    # glibc's struct mallinfo2 (malloc.h, glibc 2.33+): ten size_t fields. No maintained library exposes
    # it (psutil reports the process's pages, not the allocator's in-use bytes), so it is read here.
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in [
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        ]
    ]


def _mallinfo2() -> Any:
    name = ctypes.util.find_library("c")
    try:
        function = ctypes.CDLL(name).mallinfo2 if name else None
    except (OSError, AttributeError):  # not glibc, or a glibc older than 2.33
        return None
    if function is not None:
        function.restype = _Mallinfo2
    return function


_MALLINFO2 = _mallinfo2()


def allocated_bytes() -> int | None:
    """Bytes the C allocator has handed out and not taken back, or None where glibc's mallinfo2 is absent."""
    if _MALLINFO2 is None:
        return None
    info = _MALLINFO2()
    return int(info.uordblks + info.hblkhd)


def resident_bytes() -> int:
    """The process's resident set size."""
    import psutil

    return int(psutil.Process().memory_info().rss)


def counts() -> dict[str, int | None]:
    gc.collect()
    return {"allocated": allocated_bytes(), "resident": resident_bytes()}


def memory_growth(pte: bytes, inputs: bytes, what: str, executes: int, cycles: int) -> dict[str, Any]:
    """The counts (module docstring) around ``executes`` executes of one loaded method of ``pte`` and around
    ``cycles`` load-execute-free cycles: {"executes": [before, after], "cycles": [before, after]}, or
    {"error", "step"} naming the step the runtime refused."""
    require_runtime()
    args = unpack(inputs)
    method: Any = None
    try:
        method = load_method(pte, None, what)
        step(f"{WARMUP} executes of {what} before counting")
        for _ in range(WARMUP):
            method.execute(args)
        first = counts()
        step(f"{executes} executes of {what}, counted")
        for _ in range(executes):
            method.execute(args)
        after_executes = counts()
    except RuntimeError as exc:
        method = None
        free_programs(what)
        return {"error": str(exc), "step": f"execute of {what}"}
    method = None
    free_programs(what)
    before_cycles = counts()
    for k in range(cycles):
        label = f"{what} (load cycle {k + 1} of {cycles})"
        try:
            method = load_method(pte, None, label)
            step(f"execute of {label}")
            method.execute(args)
        except RuntimeError as exc:
            method = None
            free_programs(label)
            return {"error": str(exc), "step": f"load or execute of {label}"}
        method = None
        free_programs(label)
    return {"executes": [first, after_executes], "cycles": [before_cycles, counts()]}
