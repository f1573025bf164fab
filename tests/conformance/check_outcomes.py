"""Runs checks on a Context as the suite does (conformance/suite/test_contract.py) and returns
each one's (outcome, reason, seconds)."""

from __future__ import annotations

import time

from conformance.checks import all_checks, run_check


def run_checks(ctx, ids: list[str]) -> dict[str, tuple[str, str, float]]:
    checks = {c.id: c for c in all_checks()}
    found = {}
    for check_id in ids:
        started = time.monotonic()
        outcome, reason = run_check(ctx, checks[check_id])
        found[check_id] = (outcome, reason, time.monotonic() - started)
    return found
