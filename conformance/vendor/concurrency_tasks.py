"""Vendor-process task of RT-10 (``task_registry.CONCURRENT_METHODS``, judged by ``conformance.checks.runtime``):
threads each loading and executing their own method at once, through the runner library in this process
(``conformance.vendor.in_process_runner``), so that the backend registered here is the one that runs.

Returns what ``conformance.targets.concurrent_entry`` reads back, or ``{"error", "step"}``; a runner library
that cannot be built or loaded here is ``{"unavailable": why}`` (the suite's tools, not the backend).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from conformance.targets.bundle import Bundle
from conformance.targets.concurrent_entry import add_concurrent_entry
from conformance.vendor.core_tasks import require_runtime
from conformance.vendor.envelope import step
from conformance.vendor.in_process_runner import RunnerLibraryError, library, run_bundle


def concurrent_methods(
    programs: list[tuple[str, bytes]],
    input_sets: list[tuple[str, Any]],
    threads: int,
    iterations: int,
    cmake: str | None = None,
    ninja: str | None = None,
) -> dict:
    """See the module docstring and ``add_concurrent_entry``."""
    require_runtime()
    step("building the runner library (conformance/device_runner, once per executorch installation)")
    try:
        path = library(cmake, ninja)
    except RunnerLibraryError as exc:
        return {"unavailable": str(exc)}
    with tempfile.TemporaryDirectory(prefix="concurrent-") as tmp:
        bundle = Bundle(Path(tmp))
        handle = add_concurrent_entry(bundle, programs, input_sets, threads, iterations)
        bundle.close()
        step(f"concurrent loads and executes of the samples ({threads} threads x {iterations} executes)")
        try:
            run_bundle(path, Path(tmp))
        except RunnerLibraryError as exc:
            return {"unavailable": str(exc)}
        return handle(Path(tmp) / "results")
