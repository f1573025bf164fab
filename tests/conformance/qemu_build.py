"""Cross-builds runners for aarch64 with scripts/cross_build_runner.py, into build/tests/, for the
qemu target's tests; says why not when the cross compiler or the emulator is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from runner_build import tool

__all__ = ["ROOT", "cross_build", "require", "tool", "unavailable"]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "cross_build_runner.py"
#: Set by .ci/run: a missing cross compiler or emulator fails the tests instead of skipping them.
REQUIRED_ENV = "EXECUTORCH_CONFORMANCE_REQUIRE_QEMU"
#: Minutes, not seconds: the machine may be busy (two cores, other runs).
BUILD_TIMEOUT_S = 1200


def unavailable() -> str | None:
    """Why the aarch64 runner cannot be built and run here, or None."""
    missing = [
        f"{tool} (apt-get install {package})"
        for tool, package in (
            ("aarch64-linux-gnu-g++", "g++-aarch64-linux-gnu"),
            ("qemu-aarch64", "qemu-user"),
        )
        if shutil.which(tool) is None
    ]
    return f"not installed: {', '.join(missing)}" if missing else None


def require() -> None:
    """Skips the calling test when the tools are missing, unless CI asks for them (then it fails)."""
    import pytest

    why = unavailable()
    if why is None:
        return
    if os.environ.get(REQUIRED_ENV):
        pytest.fail(f"{why}, and {REQUIRED_ENV} is set (.ci/run installs them)")
    pytest.skip(why)


def cross_build(name: str, *args: str) -> Path:
    """The output directory of ``cross_build_runner.py ARGS`` in build/tests/cross-<name>, shared by the xdist
    workers: one builds while the others wait on a lock, then find it built (the script is incremental)."""
    import fcntl

    out = ROOT / "build" / "tests" / f"cross-{name}"
    out.parent.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, str(SCRIPT), "--out", str(out), *args]
    with open(out.parent / f"cross-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    assert proc.returncode == 0, f"{' '.join(argv)} failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
    return out
