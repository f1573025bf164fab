"""Whole suite runs of SimGraphBackend, a backend with no runtime library whose descriptor names a
simulator (docs/contract.md, "Simulated runtimes"): its runtime results are marked simulated everywhere a
reader meets them, what the simulator cannot show is not applicable with the reason, a simulated pass never
certifies, and a simulator that computes wrong, refuses, crashes or hangs fails the check that met it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "conformance"))

from suite_runner import BROKEN, results_by_id, run_suite  # noqa: E402

from conformance.report import verdict  # noqa: E402

BACKENDS = "simulated_backends.descriptors"


def _run(tmp_path: Path, name: str, *extra: str) -> tuple[int, dict, str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join([str(HERE), str(BROKEN), os.environ.get("PYTHONPATH", "")])
    code, report, output = run_suite(tmp_path, f"{BACKENDS}:{name}", *extra, env={"PYTHONPATH": path})
    assert report is not None, output[-3000:]
    return code, report, output


def test_a_simulated_run_marks_every_runtime_result_and_leaves_the_runtime_library_unjudged(tmp_path):
    code, report, output = _run(tmp_path, "DESCRIPTOR", "--checks", "RT,OPS")
    assert code == 0, output[-3000:]
    assert report["verdict"] == "conformant"
    assert report["simulator"] == {
        "backend_id": "SimGraphBackend",
        "simulator": "simulated_backends.graph_backend:simulate",
    }
    by_id = results_by_id(report)
    for check in ("RT-1", "RT-2", "RT-9"):
        assert by_id[check]["outcome"] == "not_applicable"
        assert by_id[check]["reason"].startswith("simulated: ")
        assert "simulated" not in by_id[check]
    for check in ("RT-3", "RT-4", "RT-5", "RT-6", "RT-8", "RT-10", "OPS-2"):
        assert by_id[check]["outcome"] == "passed", by_id[check]
        assert by_id[check]["simulated"] is True
    assert "simulated" not in by_id["OPS-1"]  # lowering only: nothing ran
    # the corpus ran through the simulator, channels-last cases included
    assert all(row["passed"] == row["delegated"] for row in report["operators"])
    # every reader is told: the console, the page, the badge, verify
    assert "PASS (simulated)" in output
    assert "simulated: the delegates of SimGraphBackend ran in the vendor's simulator" in output
    page = (tmp_path / "report.html").read_text()
    assert 'id="simulated"' in page and "PASS (simulated)" in page
    assert json.loads((tmp_path / "badge.json").read_text())["message"].endswith("(simulated)")
    # a simulated pass does not certify, whatever the mode
    results = report["results"]
    text, reasons, _ = verdict(results, certify=True, capabilities=report["backend"]["capabilities"])
    assert text == "not conformant"
    assert any("passed only simulated" in r for r in reasons)


def test_verify_refuses_simulated_results_without_the_simulator(tmp_path):
    from conformance.certification.verify import verify_report

    _, report, _ = _run(tmp_path, "DESCRIPTOR", "--checks", "RT-3")
    assert not [p for p in verify_report(report) if "simulat" in p]
    del report["simulator"]
    assert any("marked simulated, but the report names no simulator" in p for p in verify_report(report))


#: name -> (outcome of RT-3, words its reason holds): each way a vendor's simulator can go wrong.
MISBEHAVING = {
    "WRONG_NUMBERS": ("failed", "differs from eager PyTorch"),
    "REFUSES": (
        "failed",
        "the simulator refused the payload: ValueError: this simulator build reads no payload",
    ),
    "CRASHES": ("crashed", "crashed with SIGSEGV in execute of sample 'linear_relu'"),
    "NOT_A_DELEGATE": ("failed", "AttributeError: 'object' object has no attribute 'num_inputs'"),
    "TOO_FEW_OUTPUTS": ("failed", "the simulator returned 0 outputs; the program plans 1"),
    "HANGS": ("timed_out", "timed out after 20 s in execute of sample 'linear_relu'"),
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.full) if n in ("NOT_A_DELEGATE", "TOO_FEW_OUTPUTS", "HANGS") else n
        for n in MISBEHAVING
    ],
)
def test_a_misbehaving_simulator_fails_the_check_that_met_it(tmp_path, name):
    outcome, words = MISBEHAVING[name]
    _, report, _ = _run(tmp_path, name, "--checks", "RT-3", "--timeout", "20")
    rt3 = results_by_id(report)["RT-3"]
    assert rt3["outcome"] == outcome, rt3
    assert words in rt3["reason"], rt3["reason"]
    assert rt3["simulated"] is True
    assert "cpuinfo_utils" not in rt3["reason"]  # the runtime's probe of the CPU is not the backend's message
    assert report["verdict"] == "not conformant"


def test_a_failing_case_of_a_simulated_run_reproduces_through_the_simulator(tmp_path):
    """``reproduce`` of a simulated run writes a script that registers the backend's simulator through the
    kit's bridge (nothing of the suite): exit 1 while the simulator's numbers are wrong."""
    import subprocess

    cli = Path(sys.executable).with_name("executorch-conformance")
    _, report, _ = _run(tmp_path / "run", "WRONG_NUMBERS", "--checks", "OPS", "--ops", "aten::neg")
    assert results_by_id(report)["OPS-2"]["outcome"] == "failed"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    out = tmp_path / "repro"
    done = subprocess.run(
        [
            str(cli),
            "reproduce",
            str(tmp_path / "run" / "report.json"),
            "aten::neg|float32|rank2",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    script = (out / "reproduce.py").read_text()
    assert "SIMULATOR = 'simulated_backends.descriptors:_off_by_one_percent'" in script
    assert "conformance" not in script.replace("executorch-conformance", "").replace("conformance suite", "")
    ran = subprocess.run(
        [sys.executable, str(out / "reproduce.py")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=out,
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "FAILS: the backend's result differs from eager PyTorch" in ran.stdout
