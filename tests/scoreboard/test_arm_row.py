"""Arm's TOSA floating-point flow through the suite: lowered with the executorch 1.5.1 wheel's TOSA
partitioner, its delegates computed by the TOSA reference model (tosa-tools 2026.5.0) through the simulator
bridge, in the environment of its own that scripts/arm_env.sh makes (tosa-tools pins numpy<2.2), while the
suite judges from this one (docs/contract.md, "Simulated runtimes"; scoreboard/arm/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

from scoreboard import run

REPO = Path(__file__).resolve().parents[2]
ROW = "arm-tosa-fp"


@pytest.fixture(scope="session")
def arm_environment(tmp_path_factory) -> Path:
    """.venv-arm, made by scripts/arm_env.sh when it is not there yet (once for every xdist worker)."""
    python = REPO / run.rows()[ROW]["vendor_python"]
    with FileLock(str(REPO / "build" / "arm-env.lock")):
        if not python.is_file():
            (REPO / "build").mkdir(exist_ok=True)
            done = subprocess.run(
                ["bash", "scripts/arm_env.sh"], cwd=REPO, capture_output=True, text=True, timeout=1800
            )
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return python


@pytest.mark.full  # a second environment (a minute to make) and the reference model: CI keeps it
def test_the_arm_tosa_row_runs_in_the_reference_model_marked_simulated(tmp_path, arm_environment):
    results = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "scoreboard.run", ROW, "--no-models", "--results", str(results)]
        + ["--ops", "aten::add.Tensor,aten::convolution", "--checks", "SER,RT-1,RT-3,RT-6,OPS"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = json.loads((results / ROW / "report.json").read_text())
    record = json.loads((results / ROW / "run.json").read_text())
    assert record["command"].endswith("--vendor-python .venv-arm/bin/python")
    assert report["simulator"] == {
        "backend_id": "TOSABackend",
        "simulator": "scoreboard.arm.tosa_simulator:simulate",
    }
    assert report["environment"]["vendor_python"]["executorch"].startswith("1.5.1")
    by_id = {r["id"]: r for r in report["results"]}
    assert by_id["RT-1"]["outcome"] == "not_applicable" and by_id["RT-1"]["reason"].startswith("simulated:")
    assert by_id["RT-3"]["outcome"] == "passed" and by_id["RT-3"]["simulated"] is True
    assert by_id["SER-1"]["outcome"] == "passed"  # the .pte that flatbuffers 25.2.10 serialized is read
    rows = {(o["op"], o["dtype"]): o for o in report["operators"]}
    conv = rows[("aten::convolution", "float32")]
    assert conv["passed"] == conv["delegated"] > 0
    # the triaged defect (scoreboard/triage.json): zero-size operands are claimed, and the graph the
    # reference model is handed for them is invalid
    add = rows[("aten::add.Tensor", "float32")]
    assert add["passed"] < add["delegated"]
    failing = [c["case"] for c in add["case_results"] if c["outcome"] != "passed"]
    assert failing and all("size0" in case for case in failing), failing


@pytest.mark.full  # the Arm quantizer on every sample and case: CI keeps it
def test_the_arm_integer_row_quantizes_every_sample_and_case_with_arms_quantizer(tmp_path, arm_environment):
    results = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "scoreboard.run", "arm-tosa-int", "--results", str(results), "--no-models"]
        + ["--ops", "aten::add.Tensor,aten::linear", "--checks", "AOT-3,AOT-4,RT-3,QNT,OPS"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    record = json.loads((results / "arm-tosa-int" / "run.json").read_text())
    assert "--models" not in record["command"]  # the short form leaves the model tier out
    # rows.json: the full row runs the model tier, each architecture quantized by TOSAQuantizer first
    assert run.rows()["arm-tosa-int"].get("models", True)
    report = json.loads((results / "arm-tosa-int" / "report.json").read_text())
    by_id = {r["id"]: r for r in report["results"]}
    for check in ("AOT-3", "AOT-4", "RT-3", "QNT-1", "QNT-2", "QNT-3", "OPS-1"):
        assert by_id[check]["outcome"] == "passed", (check, by_id[check])
    rows = {o["op"]: o for o in report["operators"]}
    # the float cases quantized by TOSAQuantizer are delegated and computed in the reference model; the
    # corpus's hand-made quantized patterns (which Arm's partitioner does not claim) are not run
    linear, add = rows["aten::linear"], rows["aten::add.Tensor"]
    assert linear["passed"] == linear["delegated"] == linear["cases"] > 0, linear
    assert add["delegated"] == add["cases"] > add["passed"] > 0, add
    # the triaged defect (scoreboard/triage.json, ARM-ZERO-SIZE) is what fails OPS-2
    failing = [c["case"] for c in add["case_results"] if c["outcome"] != "passed"]
    assert failing and all("size0" in case for case in failing), failing
    assert by_id["OPS-2"]["outcome"] == "failed"
    assert "quantized_decomposed::quantize_per_tensor" not in rows
