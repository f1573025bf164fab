"""Arm's TOSA floating-point flow through the suite: lowered with the executorch 1.5.1 wheel's TOSA
partitioner, its delegates computed by the TOSA reference model (tosa-tools 2026.5.0) through the simulator
bridge, in the environment of its own that scripts/arm_env.sh makes (tosa-tools pins numpy<2.2), while the
suite judges from this one (docs/contract.md, "Simulated runtimes"; scoreboard/arm/). The Ethos-U rows run in
the same environment ahead of time: every sample and case quantized, lowered and compiled by Vela for its NPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

from conformance.pte.reader import read_pte
from conformance.vendor.lowering_cache import DIR_ENV, LoweringCache
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
        + ["--ops", "aten::add.Tensor,aten::linear", "--checks", "AOT-3,AOT-4,RT-3,STATE-1,QNT,OPS"],
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
    for check in ("AOT-3", "AOT-4", "RT-3", "STATE-1", "QNT-1", "QNT-2", "QNT-3", "OPS-1"):
        assert by_id[check]["outcome"] == "passed", (check, by_id[check])
    # the stateful program calls the quantized sample with TOSAQuantizer's node metadata kept, which
    # TOSAPartitioner claims by: the sample, reading the mutated buffer, runs in the reference model
    assert "TOSABackend delegated aten::linear" in by_id["STATE-1"]["reason"], by_id["STATE-1"]
    assert by_id["STATE-1"]["simulated"] is True
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


#: row -> (its EthosUCompileSpec target, the signal Vela dies of on an operand with no elements: triaged with a
#: reproducer, scoreboard/reproducers/arm_ethos_u_zero_size_vela_crash.py, and declared unsupported)
ETHOS_U = {"arm-ethos-u55": ("ethos-u55-128", "SIGSEGV"), "arm-ethos-u85": ("ethos-u85-256", "SIGFPE")}
NO_RUNTIME = "the descriptor declares no runtime for this host (load_runtime is None)"


def _cached_programs(cache: Path):
    """(the operator case keys of a batch, or () for a sample, the .pte) of every lowering a run cached."""
    for kind, value in LoweringCache(cache).entries():
        if kind != "result":
            continue
        if isinstance(value, dict) and value.get("pte"):  # an operator batch
            yield tuple(c["key"] for c in value["cases"]), value["pte"]
        elif getattr(value, "pte", None):  # a sample's lowering
            yield (), value.pte


@pytest.mark.full  # Vela on each NPU (40 s a row on an idle machine): CI keeps both
@pytest.mark.parametrize("row", sorted(ETHOS_U))
def test_the_ethos_u_rows_compile_with_vela_for_their_npu_ahead_of_time(tmp_path, arm_environment, row):
    target, signal = ETHOS_U[row]
    results, cache = tmp_path / "results", tmp_path / "cache"
    proc = subprocess.run(
        [sys.executable, "-m", "scoreboard.run", row, "--no-models", "--results", str(results)]
        + ["--ops", "aten::add.Tensor,aten::upsample_nearest2d.vec"]
        + ["--checks", "AOT-3,AOT-4,AOT-6,BLOB,SER-1,RT-1,RT-3,OPS"],
        cwd=REPO,
        # a cache of its own: every lowering is made (Vela runs) and is there to look at afterwards
        env={**os.environ, DIR_ENV: str(cache)},
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = json.loads((results / row / "report.json").read_text())
    by_id = {r["id"]: r for r in report["results"]}
    assert set(by_id) == {
        "AOT-3",
        "AOT-4",
        "AOT-6",
        "BLOB-1",
        "BLOB-2",
        "SER-1",
        "RT-1",
        "RT-3",
        "OPS-1",
        "OPS-2",
    }
    for check in ("AOT-3", "AOT-4", "AOT-6", "SER-1", "OPS-1"):
        assert by_id[check]["outcome"] == "passed", (check, by_id[check])
    # no runtime on this host: the NPU's runtime runs on Arm's Corstone FVP or silicon
    for check in ("RT-1", "RT-3", "OPS-2"):
        assert (by_id[check]["outcome"], by_id[check]["reason"]) == ("not_applicable", NO_RUNTIME), check
    # ARM-HEADER (scoreboard/triage.json, class b): Vela's command stream starts with its own magic
    triage = {
        (e["row"], e["item"]): e
        for e in json.loads((REPO / "scoreboard" / "triage.json").read_text())["entries"]
    }
    for check in ("BLOB-1", "BLOB-2"):
        assert by_id[check]["outcome"] == "failed" and "wrong magic 'vela'" in by_id[check]["reason"], by_id[
            check
        ]
        assert triage[(row, check)]["class"] == "b" and triage[(row, check)]["title"].startswith("ARM-HEADER")
    assert report["summary"]["failed"] == 2 and report["verdict"] == "not conformant"

    cases = {c["key"]: c for o in report["operators"] for c in o["case_results"]}
    delegated = {key for key, c in cases.items() if c["delegated"]}
    for key in delegated:  # lowered ahead of time, and nothing run
        assert (cases[key]["outcome"], cases[key]["ran"]) == ("not_run", False), cases[key]
        assert "not executed" in cases[key]["reason"]
    # the exclusions: Vela killed by an operand with no elements (declared unsupported, so no failure; the
    # suite lowers no more zero-size cases of the operator), and a case the partitioner leaves on CPU
    zero = cases["aten::add.Tensor|float32|size0"]
    assert (zero["outcome"], zero["excluded"], zero["delegated"]) == ("excluded", True, False), zero
    assert (
        "declared unsupported (without=empty)" in zero["reason"]
        and f"crashed with {signal}" in zero["reason"]
    )
    for case in ("rank3_size0", "bcast_size0"):
        after = cases[f"aten::add.Tensor|float32|{case}"]
        assert after["outcome"] == "not_run" and after["excluded"] and f"with {signal}" in after["reason"], (
            after
        )
    add = [key for key in cases if key.startswith("aten::add.Tensor|")]
    assert sorted(set(add) - delegated) == [
        f"aten::add.Tensor|float32|{c}" for c in ("bcast_size0", "rank3_size0", "size0")
    ]
    resize = cases["aten::upsample_nearest2d.vec|float32|size"]
    if row == "arm-ethos-u55":  # U55 claims the scale case only (U55_OPS); U85 claims both
        assert (resize["outcome"], resize["delegated"]) == ("excluded", False), resize
        assert resize["reason"].startswith(
            "declared unsupported (without=case:size); left on ExecuTorch's CPU"
        )
    else:
        assert resize["delegated"], resize
    assert "aten::upsample_nearest2d.vec|float32|scale2" in delegated

    # what Vela made: every delegate of every program the run lowered is a Vela command stream compiled for this
    # row's NPU, and the delegated operator cases are among the programs that hold one
    programs = list(_cached_programs(cache))
    compiled: set[str] = set()
    samples = 0
    for keys, pte in programs:
        delegates = [d for plan in read_pte(pte).execution_plans for d in plan.delegates]
        for d in delegates:
            specs = dict(d.compile_specs)
            assert d.backend_id == "EthosUBackend" and bytes(d.data[:15]) == b"vela_bin_stream", (keys, d)
            assert specs["target"] == target.encode(), (keys, specs)
            assert f"--accelerator-config={target}".encode() in specs["compile_flags"], (keys, specs)
        if delegates:
            compiled |= set(keys)
            samples += not keys
    assert samples >= 1 and compiled == delegated, (samples, compiled ^ delegated)
