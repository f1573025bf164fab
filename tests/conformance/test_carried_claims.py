"""A backend whose RT-6 suite 0.5.0 passed fails it under 0.6.0, which made RT-6 stricter
(docs/api-stability.md, "A claim carries over"). The descriptor is as a vendor wrote it for 0.5.0 and the
claim is the report suite 0.5.0 wrote of it (tests/api/golden/suite_0_5_0/): without the claim the backend
is not conformant; with it (``--previous-report``) the failure is a warning naming the change, the report
names the claim, and verify accepts it. A claim of another backend is refused before any check runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from suite_runner import BROKEN, results_by_id, run_suite

from conformance.certification.verify import verify_file

GOLDEN = Path(__file__).parents[1] / "api" / "golden"
CLAIMS = GOLDEN / "suite_0_5_0" / "claims"

CLAIM = CLAIMS / "EXTRA_ID.json"


def _run(tmp_path: Path, runtime: Path, *extra: str):
    env = {
        "BROKEN_RUNTIME_DIR": str(runtime),
        "PYTHONPATH": os.pathsep.join([str(GOLDEN), str(BROKEN), os.environ.get("PYTHONPATH", "")]),
    }
    return run_suite(tmp_path, "suite_0_5_0.claims:EXTRA_ID", "--checks", "RT-1,RT-6", *extra, env=env)


def test_the_claim_is_a_report_of_suite_0_5_0_that_passed_rt6():
    claim = json.loads(CLAIM.read_text())
    assert (claim["suite_version"], claim["mode"], claim["backend"]["id"]) == (
        "0.5.0",
        "certify",
        "ExtraIdBackend",
    )
    assert {r["id"]: r["outcome"] for r in claim["results"]}["RT-6"] == "passed"
    assert verify_file(CLAIM) == []


@pytest.mark.full  # a suite run of two runtime checks: CI keeps it (tests/long_tier.py)
def test_a_claim_of_0_5_0_carries_over_what_0_6_0_made_stricter(tmp_path, broken_runtime_dir):
    """Without the claim, RT-6 fails this backend (test_broken_backends.py, EXTRA_ID); with it, the failure
    is a warning."""
    failing = "RT-6"
    code, report, output = _run(tmp_path / "claimed", broken_runtime_dir, "--previous-report", str(CLAIM))
    assert report is not None, output
    assert code == 0 and report["verdict"] == "conformant", report["verdict_reasons"]
    result = results_by_id(report)[failing]
    assert result["outcome"] == "failed"  # the outcome is what the check found; the claim makes it a warning
    assert {k: result["carried_over"][k] for k in ("from", "change", "since", "failure_from")} == {
        "from": "0.5.0",
        "change": "tightened",
        "since": "0.6.0",
        "failure_from": "0.7.0",
    }
    assert any(
        w.startswith(f"{failing} failed, carried over from suite 0.5.0 (") and result["reason"] in w
        for w in report["warnings"]
    ), report["warnings"]
    assert report["previous_report"]["suite_version"] == "0.5.0"
    assert verify_file(tmp_path / "claimed" / "report.json") == []
    assert "carried over from suite 0.5.0" in output  # the console lists the warning


def test_a_claim_of_another_backend_is_refused_before_any_check_runs(tmp_path, broken_runtime_dir):
    other = Path(__file__).parents[1] / "certification" / "data" / "reference-certify-0.5.0.json"
    code, report, output = _run(tmp_path, broken_runtime_dir, "--previous-report", str(other))
    assert code == 2 and report is None, output
    assert (
        f"--previous-report: the previous report {other} is of backend 'ReferenceBackend', not 'ExtraIdBackend'"
    ) in output
