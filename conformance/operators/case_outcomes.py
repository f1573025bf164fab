"""The outcome of one operator case, as the report's ``operators[].case_results`` rows give it.

Every planned case of every declared operator and dtype gets one row: its
key, one outcome of ``CASE_OUTCOMES``, the reason (None only for a pass), the
flags the per-operator counts are made of (excluded, delegated, ran), and the
worst error with the share of its tolerance it used. ``row_problems`` is the
rule a row must keep: ``verify`` applies it to every row of a report, the
runner's rows keep it by construction.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

PASSED = "passed"
FAILED_PLACEMENT = "failed_placement"  # lowered, but (partly) left on CPU or in another backend's delegate
FAILED_NUMERICS = "failed_numerics"  # ran on the runtime: an error, or results off eager PyTorch's
LOWERING_ERROR = "lowering_error"  # export, lowering or serialization raised
CRASHED = "crashed"  # the vendor process died in the case's lowering, load, execute or destroy
TIMED_OUT = "timed_out"  # ... or did not answer within the timeout
NOT_RUN = "not_run"  # not lowered or not executed: the reason says why (a crash before it, OPS-2 did not run)
EXCLUDED = "excluded"  # a trait of the case is declared unsupported and the backend did not delegate it

CASE_OUTCOMES = (
    PASSED,
    FAILED_PLACEMENT,
    FAILED_NUMERICS,
    LOWERING_ERROR,
    CRASHED,
    TIMED_OUT,
    NOT_RUN,
    EXCLUDED,
)

#: Outcomes that are a defect of the backend (the row's ``first_failing`` is the first case with one).
FAILING = (FAILED_PLACEMENT, FAILED_NUMERICS, LOWERING_ERROR, CRASHED, TIMED_OUT)

#: outcome -> (delegated, ran) it requires, None where either value may be
_FLAGS: dict[str, tuple[bool | None, bool | None]] = {
    PASSED: (True, True),
    FAILED_PLACEMENT: (False, False),
    FAILED_NUMERICS: (True, True),
    LOWERING_ERROR: (False, False),
    CRASHED: (None, None),
    TIMED_OUT: (None, None),
    NOT_RUN: (None, False),
    EXCLUDED: (False, False),
}

#: The fields of an operator row that are the largest of its cases' (``extremes``).
EXTREMES = ("worst_error", "tolerance_used")


def extremes(cases: Iterable[dict[str, Any]]) -> dict[str, float | None]:
    """The operator row's ``worst_error`` and ``tolerance_used``: each the largest finite number its cases
    hold (None when none holds one). The one rule the runner writes and ``verify`` checks: a report holds no
    infinity or NaN (``report.json_numbers`` writes them as None), so a case's non-finite value is left out
    here as in the report; its reason says what it was."""
    out: dict[str, float | None] = dict.fromkeys(EXTREMES)
    for case in cases:
        for key in EXTREMES:
            value = case.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                current = out[key]
                out[key] = value if current is None else max(current, value)
    return out


FIELDS = ("key", "case", "outcome", "reason", "excluded", "delegated", "ran", "worst_error", "tolerance_used")


def case_row(
    op: str,
    dtype: str,
    name: str,
    outcome: str,
    reason: str | None,
    *,
    excluded: bool,
    delegated: bool,
    ran: bool,
    worst_error: float | None = None,
    tolerance_used: float | None = None,
) -> dict[str, Any]:
    return {
        "key": f"{op}|{dtype}|{name}",
        "case": name,
        "outcome": outcome,
        "reason": reason,
        "excluded": excluded,
        "delegated": delegated,
        "ran": ran,
        "worst_error": worst_error,
        "tolerance_used": None if tolerance_used is None else round(tolerance_used, 4),
    }


def row_problems(row: dict[str, Any], op: str, dtype: str, where: str) -> list[str]:
    """What is wrong with one case row (its types already checked) of operator ``op`` and ``dtype``."""
    problems = []
    outcome = row["outcome"]
    if row["key"] != f"{op}|{dtype}|{row['case']}":
        problems.append(f"{where}: key {row['key']!r} is not '{op}|{dtype}|{row['case']}'")
    if outcome not in CASE_OUTCOMES:
        return problems + [f"{where}: outcome {outcome!r} is not one of {', '.join(CASE_OUTCOMES)}"]
    if (row["reason"] is None) != (outcome == PASSED):
        problems.append(
            f"{where}: outcome {outcome} " + ("has a reason" if outcome == PASSED else "gives no reason")
        )
    delegated, ran = _FLAGS[outcome]
    for flag, want in (("delegated", delegated), ("ran", ran)):
        if want is not None and row[flag] != want:
            problems.append(f"{where}: outcome {outcome} with {flag} {row[flag]}")
    if outcome == EXCLUDED and not row["excluded"]:
        problems.append(f"{where}: outcome excluded, but the case has no trait declared unsupported")
    if row["ran"] and not row["delegated"]:
        problems.append(f"{where}: ran on the runtime, but was not delegated")
    if not row["ran"] and (row["worst_error"] is not None or row["tolerance_used"] is not None):
        problems.append(f"{where}: did not run, yet records a worst error")
    if outcome == PASSED and row["tolerance_used"] is not None and row["tolerance_used"] > 1:
        problems.append(f"{where}: passed, but used {row['tolerance_used']} of its tolerance (more than 1)")
    return problems
