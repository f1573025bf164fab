"""``executorch-conformance reproduce``: a failing operator case of a report as a standalone script that
exits 1 while the defect is there, from the committed scoreboard reports (real XNNPACK, the reference
backend), and the bad input it refuses in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "scoreboard" / "results"
CLI = Path(sys.executable).with_name("executorch-conformance")


def _write(case: str, report: Path, out: Path) -> None:
    done = subprocess.run(
        [str(CLI), "reproduce", str(report), case, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"python {out / 'reproduce.py'}" in done.stdout
    assert sorted(p.name for p in out.iterdir()) == [
        "case.pt2",
        "inputs.pt",
        "partitioners.pkl",
        "reproduce.py",
    ]
    script = (out / "reproduce.py").read_text()
    assert "conformance" not in script.replace("executorch-conformance", "").replace("conformance suite", "")


def _run(out: Path) -> subprocess.CompletedProcess:
    # from another directory, with nothing of this repository on the path: the script stands alone
    return subprocess.run(
        [sys.executable, "-I", str(out / "reproduce.py")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=out,
    )


@pytest.mark.full
def test_xnnpacks_rsqrt_of_a_flushed_subnormal_is_reproduced_and_exits_1(tmp_path):
    out = tmp_path / "rsqrt"
    _write("aten::rsqrt|float32|subnormal", RESULTS / "xnnpack" / "report.json", out)
    done = _run(out)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "backend nan, eager" in done.stdout and "FAILS: the backend's result differs" in done.stdout


@pytest.mark.full
def test_a_passing_case_reproduces_as_a_match_and_exits_0(tmp_path):
    out = tmp_path / "add"
    _write("aten::add.Tensor|float32|rank2", RESULTS / "reference" / "report.json", out)
    done = _run(out)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "lowered: 1 delegate call(s)" in done.stdout and "matches eager PyTorch" in done.stdout


def _refused(capsys, *argv: str) -> str:
    code = main(["reproduce", *argv])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_a_case_the_report_does_not_hold_is_refused_naming_its_failing_cases(capsys, tmp_path):
    err = _refused(
        capsys,
        str(RESULTS / "xnnpack" / "report.json"),
        "aten::rsqrt|float32|nope",
        "--out",
        str(tmp_path / "x"),
    )
    assert "has no operator case 'aten::rsqrt|float32|nope'" in err and "its failing cases: " in err
    assert "aten::rsqrt|float32|subnormal" in err or ", ..." in err


def test_a_file_that_is_not_a_report_is_refused(capsys, tmp_path):
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps({"hello": 1}))
    assert "names no options.backend" in _refused(capsys, str(bad), "aten::add.Tensor|float32|rank2")
    assert "cannot be read" in _refused(
        capsys, str(tmp_path / "missing.json"), "aten::add.Tensor|float32|rank2"
    )


def test_a_directory_that_is_not_empty_is_refused(capsys, tmp_path):
    (tmp_path / "keep").write_text("mine")
    err = _refused(
        capsys,
        str(RESULTS / "reference" / "report.json"),
        "aten::add.Tensor|float32|rank2",
        "--out",
        str(tmp_path),
    )
    assert "exists and is not empty" in err
