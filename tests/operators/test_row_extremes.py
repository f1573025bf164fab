"""An operator row's worst_error and tolerance_used are what ``verify`` recomputes from its cases, also when a
case's error is not finite (an output of inf or NaN where eager PyTorch has a number): found on Arm's TOSA
row, whose relu gives the largest float for +inf and whose report verify refused."""

from __future__ import annotations

import math

import pytest

from conformance.operators.case_outcomes import extremes
from conformance.report import json_numbers


def _verify_rule(cases: list[dict]) -> dict:
    """What verify requires of the row (conformance/certification/verify.py, _operator_problems)."""
    out = {}
    for key in ("worst_error", "tolerance_used"):
        values = [c[key] for c in json_numbers(cases) if c[key] is not None]
        out[key] = max(values) if values else None
    return out


@pytest.mark.parametrize(
    "cases",
    [
        [(0.0, 0.0), (2e-7, 0.16), (math.inf, math.inf)],
        [(None, None), (math.nan, None), (1e-7, 0.1)],
        [(math.inf, None), (None, None)],
        [(1.0, None), (None, 0.5)],
        [],
    ],
)
def test_the_row_holds_the_largest_finite_value_of_its_cases(cases):
    rows = [{"worst_error": w, "tolerance_used": t} for w, t in cases]
    assert json_numbers(extremes(rows)) == _verify_rule(rows)
    # what the report holds of the cases gives the same row (verify reads it so)
    assert extremes(json_numbers(rows)) == _verify_rule(rows)
