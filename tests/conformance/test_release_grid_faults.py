"""A runtime release that crashes or hangs fails its cells of the release grid, with the signal or the
timeout and the step, and never takes the grid down: the other cells are still judged.

Each "release" is an interpreter of its own: a script that starts this environment's python with the broken
backends on its path and, for the faulty release, MISBEHAVE set (tests/conformance/broken)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from suite_runner import BROKEN

CLI = Path(sys.executable).with_name("executorch-conformance")
BACKEND = "broken_backends.descriptors:MISBEHAVING"


def _interpreter(where: Path, name: str, variables: dict[str, str]) -> Path:
    script = where / f"python-{name}"
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in variables.items())
    script.write_text(f'#!/bin/sh\n{exports}exec {shlex.quote(sys.executable)} "$@"\n')
    script.chmod(0o755)
    return script


def _grid(tmp_path: Path, broken_runtime_dir: Path, fault: str, *extra: str) -> tuple[int, dict, str]:
    base = {"PYTHONPATH": str(BROKEN), "BROKEN_RUNTIME_DIR": str(broken_runtime_dir)}
    good = _interpreter(tmp_path, "good", base)
    faulty = _interpreter(tmp_path, "faulty", {**base, "MISBEHAVE": fault})
    out = tmp_path / "grid.json"
    argv = [
        str(CLI),
        "release-grid",
        "--backend",
        BACKEND,
        "--programs",
        "samples",
        "--json",
        str(out),
        *extra,
    ]
    argv += ["--release", f"good={good}", "--release", f"faulty={faulty}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    return done.returncode, json.loads(out.read_text()), done.stdout + done.stderr


def _cells(grid: dict) -> dict:
    return {(c["writer"], c["runtime"]): c for c in grid["cells"]}


@pytest.mark.full
def test_a_runtime_release_that_crashes_fails_its_cells_with_the_signal(tmp_path, broken_runtime_dir):
    code, grid, output = _grid(tmp_path, broken_runtime_dir, "execute:segv")
    assert code == 1, output
    cells = _cells(grid)
    for writer in ("good", "faulty"):
        assert cells[(writer, "good")]["passed"], cells[(writer, "good")]
        outcomes = cells[(writer, "faulty")]["outcomes"]
        assert [o["kind"] for o in outcomes] == ["crashed", "crashed"], outcomes
        assert all("SIGSEGV" in o["detail"] and "execute of sample" in o["detail"] for o in outcomes), (
            outcomes
        )
    assert "Traceback" not in output


@pytest.mark.full
def test_a_runtime_release_that_hangs_fails_its_cells_with_the_timeout(tmp_path, broken_runtime_dir):
    code, grid, output = _grid(tmp_path, broken_runtime_dir, "execute:hang", "--timeout", "30")
    assert code == 1, output
    cells = _cells(grid)
    assert cells[("good", "good")]["passed"] and cells[("faulty", "good")]["passed"]
    outcomes = cells[("good", "faulty")]["outcomes"] + cells[("faulty", "faulty")]["outcomes"]
    assert [o["kind"] for o in outcomes] == ["timed-out"] * 4, outcomes
    assert all("timed out after" in o["detail"] for o in outcomes), outcomes
