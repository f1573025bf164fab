"""What pytest's report of one check's test says, as the suite's outcome of that check.

pytest reports each phase of a test (setup, call, teardown) as a ``TestReport``; ``outcome_of`` turns one
into the check's (outcome, reason) (``conformance.outcomes``), or None for a phase that adds nothing.
The check's own words travel as the report's user properties (``Context.record``: ``outcome``, ``note``,
the seconds of ``SECONDS_PROPERTIES``), never decoded from the failure's text except where pytest leaves
nothing else: a skip's message, an xdist worker that crashed, the vendor process found dead after the
last check (``AFTER_THE_LAST_TASK``).
"""

from __future__ import annotations

import pytest

from conformance.outcomes import (
    CRASHED,
    ERROR,
    EXPECTED_FAILURE,
    FAILED,
    NOT_APPLICABLE,
    PASSED,
    UNEXPECTED_PASS,
)
from conformance.vendor import step_times

#: How the last liveness check's failure begins (the plugin's ``et_context``): the result of the check that
#: ran last.
AFTER_THE_LAST_TASK = "the vendor process did not stay alive after the run's last task"
#: The per-check seconds the run records as user properties (``Context.record``): the shared setup, and
#: where the vendor process's time went (``conformance.vendor.step_times``).
SECONDS_PROPERTIES = ("shared_s", *(f"{kind}_s" for kind in step_times.KINDS))


def outcome_of(report: pytest.TestReport) -> tuple[str, str] | None:
    """(outcome, reason) of a check's report, or None for phases that add nothing."""
    props = dict(report.user_properties)
    reason = reason_of(report)
    if hasattr(report, "wasxfail"):
        if report.skipped:
            return EXPECTED_FAILURE, report.wasxfail
        return UNEXPECTED_PASS, f"expected to fail ({report.wasxfail}) but passed"
    if report.skipped:  # declared (setup) or raised by the check (call)
        return NOT_APPLICABLE, reason.removeprefix("Skipped: ").removeprefix("not applicable: ")
    if "crashed while running" in reason:  # an xdist worker died (the vendor process should have)
        return CRASHED, reason
    if report.when == "teardown" and report.failed and reason.startswith(AFTER_THE_LAST_TASK):
        return CRASHED, reason
    if report.when == "call":
        if report.passed:
            return PASSED, str(props.get("note", ""))
        if "[XPASS(strict)]" in reason:
            return UNEXPECTED_PASS, reason
        return str(props.get("outcome", FAILED)), reason
    if report.failed:
        return ERROR, reason
    return None


def reason_of(report: pytest.TestReport) -> str:
    """The message of a report's failure or skip ('' when it has none)."""
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple):  # skips: (path, line, message)
        return str(longrepr[2])
    crash = getattr(longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(longrepr)
    return text.removeprefix("Failed: ")


def summed_seconds(properties: list[tuple[str, object]]) -> dict[str, float]:
    """Each of ``SECONDS_PROPERTIES`` summed over a test report's properties (0.0 when absent)."""
    return {key: sum(float(str(v)) for k, v in properties if k == key) for key in SECONDS_PROPERTIES}


def check_id_of(nodeid: str) -> str | None:
    """'...test_check[RT-3]' -> 'RT-3' (reports of crashed xdist workers carry no user properties)."""
    if nodeid.endswith("]") and "[" in nodeid:
        return nodeid[nodeid.rindex("[") + 1 : -1]
    return None
