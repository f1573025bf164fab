"""The result rows a run collects (conformance/run/check_results.py), from pytest's test reports as the
plugin feeds them: the row of each check with the report's keys (``ResultRow``), its step times, its
``simulated`` mark, and a ``not_run`` row for a check that never reported."""

from __future__ import annotations

import pytest

from conformance.checks import all_checks
from conformance.report import ResultRow
from conformance.run.check_results import CheckResults

CHECKS = {c.id: c for c in all_checks()}
FIRST, SECOND, THIRD = list(CHECKS)[:3]
REQUIRED = set(ResultRow.__required_keys__)


def _report(
    check_id: str, when: str, outcome: str, properties: list[tuple[str, object]]
) -> pytest.TestReport:
    return pytest.TestReport(
        nodeid=f"conformance/suite.py::test_check[{check_id}]",
        location=("conformance/suite.py", 0, "test_check"),
        keywords={},
        outcome=outcome,
        longrepr=None
        if outcome == "passed"
        else ("conformance/suite.py", 1, "Skipped: not applicable: none"),
        when=when,
        user_properties=[("check_id", check_id), *properties],
        duration=1.23456,
    )


def test_a_check_that_reported_has_its_row_with_the_step_times():
    collected = CheckResults(CHECKS, None)
    properties = [("shared_s", "0.5"), ("init_s", "0.1234"), ("execute_s", "0.2"), ("simulated", "1")]
    collected.record(_report(FIRST, "call", "passed", properties))
    row = collected.complete([FIRST], interrupted=False)[0]
    assert set(row) >= REQUIRED
    assert row["id"] == FIRST
    assert row["outcome"] == "passed"
    assert (row["duration_s"], row["shared_s"]) == (1.235, 0.5)
    assert (row["init_s"], row["execute_s"], row["lowering_s"]) == (0.123, 0.2, 0)
    assert row["simulated"] is True


def test_a_skipped_check_is_not_applicable_and_unmarked():
    collected = CheckResults(CHECKS, None)
    collected.record(_report(SECOND, "setup", "skipped", []))
    row = collected.complete([SECOND], interrupted=False)[0]
    assert (row["outcome"], row["reason"]) == ("not_applicable", "none")
    assert "simulated" not in row


def test_a_check_that_never_reported_is_not_run():
    row = CheckResults(CHECKS, None).complete([THIRD], interrupted=True)[0]
    assert set(row) >= REQUIRED
    assert row["outcome"] == "not_run"
    assert "interrupted" in row["reason"]
    assert "init_s" not in row


def test_the_rows_step_times_are_every_kind_of_step_time():
    """``record`` writes the step times into a row key by key, so that mypy holds them to ResultRow: a new kind
    of step time (conformance/vendor/step_times.py) must reach it, and the row's type, here first."""
    from conformance.run.check_reports import SECONDS_PROPERTIES

    assert SECONDS_PROPERTIES == ("shared_s", "init_s", "execute_s", "lowering_s")
    assert set(SECONDS_PROPERTIES) <= set(ResultRow.__annotations__)
