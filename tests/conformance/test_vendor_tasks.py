"""The vendor process runs the tasks of conformance/vendor/task_registry.py by name, and nothing else; the
run's memory limit reaches every vendor process the Context starts (it travels with the Context, not
through a module global)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.context import Context
from conformance.descriptor import load_descriptor
from conformance.outcomes import CheckFailed
from conformance.vendor.process import VendorProcess

#: Start-up of a vendor process (torch and executorch imported) on a busy machine.
TIMEOUT_S = 600


def _data_limit(pid: int) -> int:
    """The soft RLIMIT_DATA of process ``pid``, from /proc (what the kernel enforces)."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max data size"):
            return int(line.split()[3])
    raise AssertionError(f"no 'Max data size' in /proc/{pid}/limits")


def test_only_registered_tasks_run(tmp_path):
    vendor = VendorProcess("ReferenceBackend", tmp_path)
    try:
        assert vendor.call("ping", what="ping", timeout=TIMEOUT_S) > 0
        for name in ("conformance.vendor.capability_tasks:composition_flow", "os:system", "pack"):
            with pytest.raises(
                CheckFailed, match=rf"no vendor-process task is called '{name}' \(a defect of the suite\)"
            ):
                vendor.call(name, "true", what=f"task {name}", timeout=TIMEOUT_S)
        assert vendor.restarts == 0  # refused in the envelope, not a crash
    finally:
        vendor.close()


def test_the_memory_limit_reaches_each_vendor_process_of_the_context(tmp_path):
    limit = 3 << 30
    ctx = Context(load_descriptor("ReferenceBackend"), "ReferenceBackend", memory_bytes=limit)
    helper = ctx.new_vendor_process(tmp_path)  # as the operator checks' lowering helpers are made
    try:
        assert ctx.vendor.memory_bytes == limit  # the Context's own process: the same initializer arguments
        assert _data_limit(helper.call("ping", what="ping", timeout=TIMEOUT_S)) == limit
    finally:
        helper.close()
        ctx.close()
