"""The files a run writes beside its report (conformance/results/artifacts.py), from a real certify report."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from conformance.results.artifacts import found, reserved_name_problem, write_artifacts

REPORT = json.loads(
    (
        Path(__file__).resolve().parents[1] / "certification" / "data" / "reference-certify-0.6.0.json"
    ).read_text()
)


def test_the_page_badge_and_case_junit_are_written_beside_the_report(tmp_path):
    made = write_artifacts(REPORT, tmp_path / "certify.json")
    assert made.page == tmp_path / "certify.html" and "ReferenceBackend" in made.page.read_text()
    assert made.badge == (tmp_path / "badge.svg", tmp_path / "badge.json")
    assert json.loads(made.badge[1].read_text())["message"].startswith("Core + Versioned blobs")
    assert (
        made.operators_junit == tmp_path / "junit-operators.xml"
        and "<testcase" in made.operators_junit.read_text()
    )
    assert found(tmp_path / "certify.json") == made


def test_an_interrupted_run_writes_no_badge_and_removes_an_earlier_one(tmp_path):
    write_artifacts(REPORT, tmp_path / "report.json")
    interrupted = copy.deepcopy(REPORT)
    interrupted["interrupted"] = True
    interrupted["operators"] = None
    made = write_artifacts(interrupted, tmp_path / "report.json")
    assert (
        made.badge is None
        and not (tmp_path / "badge.svg").exists()
        and not (tmp_path / "badge.json").exists()
    )
    assert made.operators_junit is None and not (tmp_path / "junit-operators.xml").exists()
    assert made.page.exists()
    assert found(tmp_path / "report.json") == made


def test_a_report_may_not_take_the_name_of_a_file_written_beside_it():
    for name in ("badge.json", "badge.svg", "junit-operators.xml", "report.html"):
        problem = reserved_name_problem(f"out/{name}", "--et-report")
        assert (
            problem is not None
            and problem.startswith(f"--et-report out/{name}:")
            and "another name" in problem
        )
    assert reserved_name_problem("out/report.json", "--et-report") is None
