"""The report records the deprecation warnings a run met (``deprecations``, docs/report-schema.md):
typed, kept when read and written again, and a report with them still verifies; reports without the
field (every earlier suite version) verify as before."""

from __future__ import annotations

import dataclasses
import datetime
import json
import warnings
from pathlib import Path

import pytest

from conformance.certification.verify import check_report
from conformance.descriptor import from_info, to_info
from conformance.report import Report, build_report, seal, type_problems
from conformance.results.summary_text import verdict_lines
from reference_backend.conformance import DESCRIPTOR

FIXTURES = Path(__file__).resolve().parents[1] / "certification" / "data"
GETITEM = "<built-in function getitem>"


def _deprecated():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dataclasses.replace(DESCRIPTOR, supported_ops=DESCRIPTOR.supported_ops | {GETITEM})


def _report(descriptor) -> Report:
    return build_report(
        descriptor=descriptor,
        results=[],
        certify=False,
        interrupted=False,
        selected=[],
        options={
            "backend": "x",
            "expectations": None,
            "certify": False,
            "checks": None,
            "timeout": 1.0,
            "workers": 1,
        },
        command="x",
        duration_s=0.0,
    )


@pytest.mark.full
def test_the_deprecations_cross_to_the_process_that_judges_and_into_the_report():
    seen = from_info(json.loads(json.dumps(to_info(_deprecated(), lambda _what, fn: fn()))))
    messages = seen.deprecations()  # the non-schema entry, and supported_ops itself (since 0.6.0)
    assert len(messages) == 2 and GETITEM in messages[0]
    report = _report(seen).to_dict()
    assert report["deprecations"] == list(messages)
    assert Report.from_dict(seal(report)).to_dict() == seal(report)
    for message in messages:
        assert f"  - deprecated: {message}" in verdict_lines(report)


def test_a_run_without_deprecations_writes_no_field():
    assert "deprecations" not in _report(DESCRIPTOR).to_dict()


def test_the_field_is_typed():
    report = json.loads((FIXTURES / "reference-certify-0.5.0.json").read_text())
    report["deprecations"] = "supported_ops lists ..."
    assert "field 'deprecations' is a string, not a list" in type_problems(report)
    report["deprecations"] = [3]
    assert "field 'deprecations[0]' is an integer, not a string" in type_problems(report)


def test_a_report_with_deprecations_verifies_and_old_reports_still_do():
    for name in (
        "reference-certify-0.3.0.json",
        "reference-certify-0.4.0.json",
        "reference-certify-0.5.0.json",
    ):
        report = json.loads((FIXTURES / name).read_text())
        day = datetime.date.fromisoformat(report["created"][:10])
        assert check_report(report, today=day).problems == [], name
        assert "deprecations" not in report
    report = json.loads((FIXTURES / "reference-certify-0.5.0.json").read_text())
    report["deprecations"] = [_deprecated().deprecations()[0]]
    day = datetime.date.fromisoformat(report["created"][:10])
    verification = check_report(seal(report), today=day)
    assert verification.problems == [] and verification.verdict == report["verdict"]
