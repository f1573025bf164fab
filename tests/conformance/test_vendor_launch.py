"""How a vendor process is started (``conformance.vendor.launch``): a process for a task of gigabytes
gets glibc's huge-page tunable, added to the vendor's own tunables by its launcher; every other process
starts with the environment it would have had."""

from __future__ import annotations

import multiprocessing
import subprocess

import pytest

from conformance.vendor.launch import HUGE_PAGES_TUNABLE, WORKER_NAME, _vendor_environment
from conformance.vendor.process import VendorProcess


def _worker_environment(huge_pages: bool) -> dict[str, str]:
    """The environment of a real vendor process of the reference backend, read from /proc while it lives."""

    def workers() -> set[int]:
        return {c.pid for c in multiprocessing.active_children() if c.name.startswith(WORKER_NAME) and c.pid}

    before = workers()  # vendor processes of other tests of this (xdist) process may still live
    vendor = VendorProcess("ReferenceBackend", huge_pages=huge_pages)
    try:
        vendor.call("ping", what="ping", timeout=120)
        (worker,) = workers() - before
        with open(f"/proc/{worker}/environ", "rb") as file:
            entries = file.read().split(b"\0")
    finally:
        vendor.close()
    return dict(e.decode(errors="replace").partition("=")[::2] for e in entries if e)


def test_a_huge_pages_process_gets_the_tunable(monkeypatch):
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    assert _worker_environment(huge_pages=True)["GLIBC_TUNABLES"] == HUGE_PAGES_TUNABLE


@pytest.mark.parametrize("own", [None, "glibc.malloc.arena_max=2"])
def test_the_launcher_adds_the_tunable_to_the_vendors_own(own):
    """The launcher's lines, run by /bin/sh with the vendor's GLIBC_TUNABLES, export both."""
    lines = _vendor_environment(None, huge_pages=True)
    assert lines.endswith("exec ")
    script = lines + "/usr/bin/env"
    environment = {"PATH": "/usr/bin:/bin", **({"GLIBC_TUNABLES": own} if own else {})}
    out = subprocess.run(
        ["/bin/sh", "-c", script], env=environment, capture_output=True, text=True, check=True
    )
    found = [line for line in out.stdout.splitlines() if line.startswith("GLIBC_TUNABLES=")]
    assert found == [
        f"GLIBC_TUNABLES={own}:{HUGE_PAGES_TUNABLE}" if own else f"GLIBC_TUNABLES={HUGE_PAGES_TUNABLE}"
    ]


def test_any_other_process_keeps_the_environment_it_had(monkeypatch):
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")
    assert _worker_environment(huge_pages=False)["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=2"
    monkeypatch.delenv("GLIBC_TUNABLES")
    assert "GLIBC_TUNABLES" not in _worker_environment(huge_pages=False)
