"""One test per check of the contract (IDs and clauses: docs/contract.md)."""

from __future__ import annotations

import traceback

import pytest

from conformance.checks import all_checks
from conformance.outcomes import ERROR, CheckFailed, NotApplicable


@pytest.mark.parametrize("check", all_checks(), ids=lambda c: c.id)
def test_check(check, et_context, record_property):
    et_context.start_check(check.id)
    try:
        note = _run(check, et_context, record_property)
    except NotApplicable as exc:
        pytest.skip(f"not applicable: {exc}")
    except CheckFailed as exc:
        outcome = getattr(exc, "outcome", None)
        if outcome:
            record_property("outcome", outcome)
        pytest.fail(str(exc), pytrace=False)
    except Exception as exc:  # noqa: BLE001  a defect of the suite itself, or of its set-up: never a pass
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        record_property("outcome", ERROR)
        pytest.fail(
            f"the check itself failed: {type(exc).__name__}: {exc} (at {frame.filename}:{frame.lineno})",
            pytrace=False,
        )
    if note:
        record_property("note", str(note))


def _run(check, et_context, record_property):
    """Runs the check; what it recorded with ``Context.record`` goes to its report, whatever the outcome."""
    try:
        if check.applies_if:  # a conditional check never runs without its capability (NotApplicable)
            et_context.capability(check.applies_if)
        return check.run(et_context)
    finally:
        for key, value in getattr(et_context, "properties", {}).pop(check.id, ()):
            record_property(key, value)
