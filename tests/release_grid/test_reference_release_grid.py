"""The reference backend's own release grid: its 0.4.0 release and a broken 0.5.0 that adds an operator
(aten::exp, opcode 23) without bumping the blob format, each built from this repository's history into an
environment of its own (scripts/reference_releases.py), run through ``executorch-conformance release-grid``.

The broken release's blobs on 0.4.0's runtime fail with 0x23 (not the contract's 0x30) on the programs that
use the new opcode; every other cell passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILDER = REPO / "scripts" / "reference_releases.py"
CLI = Path(sys.executable).with_name("executorch-conformance")


def _environments(*versions: str) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, str(BUILDER), *versions, "--broken"], capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)


@pytest.mark.full
def test_an_operator_added_without_a_format_bump_is_caught(tmp_path):
    envs = _environments("0.4.0")
    assert list(envs) == ["0.4.0", "0.5.0-unbumped"]
    out = tmp_path / "grid.json"
    argv = [str(CLI), "release-grid", "--backend", "ReferenceBackend", "--json", str(out)]
    for label, python in envs.items():
        argv += ["--release", f"{label}={python}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1200, env=dict(os.environ))
    assert done.returncode == 1, done.stdout + done.stderr
    grid = json.loads(out.read_text())
    assert [r["version"] for r in grid["releases"]] == ["0.4.0", "0.5.0"]
    written = {r["label"]: r["programs"] for r in grid["releases"]}
    assert "aten::exp float32 (size1)" in written["0.5.0-unbumped"]
    assert not any("aten::exp" in p for p in written["0.4.0"])
    cells = {(c["writer"], c["runtime"]): c for c in grid["cells"]}
    bad = cells[("0.5.0-unbumped", "0.4.0")]
    assert not bad["passed"]
    failing = {o["program"]: o for o in bad["outcomes"] if o["kind"] != "runs"}
    assert "aten::exp float32 (size1)" in failing
    assert all(o["kind"] == "error" and "0x:23" in o["detail"] for o in failing.values()), failing
    # everything without the new opcode still runs on the old runtime
    assert sum(o["kind"] == "runs" for o in bad["outcomes"]) == len(written["0.4.0"]) - (len(failing) - 1)
    for key in (("0.4.0", "0.4.0"), ("0.4.0", "0.5.0-unbumped"), ("0.5.0-unbumped", "0.5.0-unbumped")):
        assert cells[key]["passed"] and all(o["kind"] == "runs" for o in cells[key]["outcomes"]), key
    assert "blobs of 0.5.0-unbumped on runtime 0.4.0: aten::exp float32 (size1): error:" in done.stdout
    assert "FAILS: " in done.stdout and "0x:23" in done.stdout
