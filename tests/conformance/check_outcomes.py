"""Runs checks on a Context as the suite does (conformance/suite/test_contract.py) and returns
each one's (outcome, reason, seconds)."""

from __future__ import annotations

import time

from conformance.checks import all_checks
from conformance.outcomes import FAILED, NOT_APPLICABLE, PASSED, CheckFailed, NotApplicable


def run_checks(ctx, ids: list[str]) -> dict[str, tuple[str, str, float]]:
    checks = {c.id: c for c in all_checks()}
    found = {}
    for check_id in ids:
        ctx.start_check(check_id)
        started = time.monotonic()
        try:
            checks[check_id].run(ctx)
            outcome, reason = PASSED, ""
        except NotApplicable as exc:
            outcome, reason = NOT_APPLICABLE, str(exc)
        except CheckFailed as exc:
            outcome, reason = getattr(exc, "outcome", FAILED), str(exc)
        found[check_id] = (outcome, reason, time.monotonic() - started)
    return found
