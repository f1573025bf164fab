"""Operator checks: every case of the operator corpus for every operator and
dtype the backend declares (``BackendDescriptor.operators``) is lowered with
the backend's partitioners, must land in one of its delegates (OPS-1), and must
run on its runtime with the results of eager PyTorch within the corpus's
tolerance (OPS-2)."""

from __future__ import annotations

import json

from conformance.context import Context
from conformance.operators import runner
from conformance.outcomes import CheckFailed, NotApplicable
from conformance.registry import check

#: Failing cases quoted in a reason (all of them are in the report's operators section).
QUOTED = 3


def _record(ctx: Context, found: list[runner.CaseResult], executed: bool) -> list[dict]:
    rows = runner.summary(ctx, found, executed)
    record = getattr(ctx, "record", None)
    if record is not None:
        record("operators", json.dumps(rows, sort_keys=True))
    return rows


def _require_declared(ctx: Context) -> None:
    if not runner.selected_pairs(ctx):
        raise NotApplicable("the descriptor declares no operators (or --et-ops selects none of them)")


def _fail(
    what: str, problems: list[tuple[runner.CaseResult, str]], rows: list[dict], more_text: str = ""
) -> None:
    failing_pairs = sorted({(r.case.op, r.case.dtype) for r, _ in problems})
    quoted = "; ".join(f"{r.case.describe()}: {why}" for r, why in problems[:QUOTED])
    more = f" (and {len(problems) - QUOTED} more)" if len(problems) > QUOTED else ""
    pairs = ", ".join(f"{op} {dtype}" for op, dtype in failing_pairs[:8])
    pairs += f" and {len(failing_pairs) - 8} more" if len(failing_pairs) > 8 else ""
    total = sum(row["cases"] for row in rows)
    raise CheckFailed(
        f"{len(problems)} of {total} operator cases {what} ({pairs}): {quoted}{more}{more_text}"
    )


def _note(ctx: Context, found: list[runner.CaseResult], extra: str = "") -> str | None:
    parts = []
    excluded = sum(r.excluded for r in found)
    if excluded:
        parts.append(f"{excluded} cases with traits the backend declares unsupported need not be delegated")
    missing = runner.uncovered(ctx)
    if missing:
        parts.append(f"no corpus cases for {', '.join(missing)}")
    if extra:
        parts.append(extra)
    return "; ".join(parts) or None


@check(
    "OPS-1", "C-OPS-1", "every corpus case of every declared operator and dtype is delegated to the backend"
)
def operators_delegated(ctx: Context) -> str | None:
    _require_declared(ctx)
    found = runner.results(ctx, execute=False)
    rows = _record(ctx, found, executed=False)
    own = ctx.descriptor.backend_id
    problems = [(r, why) for r in found if not r.excluded and (why := r.placement_problem(own))]
    if problems:
        _fail("were not delegated", problems, rows)
    delegated = sum(not r.excluded for r in found)  # the excluded ones are counted by _note
    return _note(ctx, found, f"{delegated} cases of {len(rows)} operator/dtype pairs delegated")


@check("OPS-2", "C-OPS-2", "every delegated corpus case runs on the runtime and matches eager PyTorch")
def operators_compute(ctx: Context) -> str | None:
    _require_declared(ctx)
    ctx.require_runtime()
    found = runner.results(ctx, execute=True)
    rows = _record(ctx, found, executed=True)
    problems = [(r, why) for r in found if r.ran and (why := r.numerics_problem())]
    not_run = [r for r in found if r.lowered and r.not_run is not None]
    if problems:
        more = f"; {len(not_run)} delegated cases were not run after a crash or timeout" if not_run else ""
        _fail("failed on the runtime", problems, rows, more)
    ran = sum(r.ran for r in found)
    if not ran:
        raise CheckFailed("no declared operator case was delegated, so none could run (see OPS-1)")
    skipped = len(found) - ran
    # Only what OPS-2 found: the cases declared unsupported and the pairs without corpus cases are OPS-1's
    # reason (and the operators table's), not repeated here.
    return (
        f"{ran} delegated cases matched eager PyTorch"
        + (f"; {skipped} not delegated were not run (OPS-1 says why)" if skipped else "")
        + _declared_tolerances(ctx, found)
        + _declared_nan_modes(found)
        + _declared_flushes(found)
    )


def _judged_as_declared(found: list[runner.CaseResult], flag: str, holding: str, how: str) -> str:
    """'; N cases holding <holding> of <ops> <how>' for the cases run whose ``flag`` is set, or ''."""
    judged = [r for r in found if r.ran and getattr(r, flag)]
    if not judged:
        return ""
    ops = ", ".join(sorted({r.case.op for r in judged}))
    return f"; {len(judged)} cases holding {holding} of {ops} {how}"


def _declared_nan_modes(found: list[runner.CaseResult]) -> str:
    """The cases judged with NaN left out, as declared (nan_mode='ignore'), or ''."""
    return _judged_as_declared(
        found,
        "nan_ignored",
        "a NaN operand",
        "were judged with NaN left out, as the descriptor declares (nan_mode='ignore', TOSA 1.0's IGNORE) "
        "instead of eager's propagation",
    )


def _declared_flushes(found: list[runner.CaseResult]) -> str:
    """The cases that matched only with subnormals flushed, as declared (subnormals='flushed'), or ''."""
    return _judged_as_declared(
        found,
        "subnormals_flushed",
        "subnormal operands",
        "matched only with subnormals flushed to zero, as the descriptor declares (subnormals='flushed')",
    )


def _declared_tolerances(ctx: Context, found: list[runner.CaseResult]) -> str:
    """'; N cases judged with the tolerances the descriptor declares (...)', or ''."""
    widened = [r for r in found if r.ran and r.declared_tolerance]
    if not widened:
        return ""
    pairs = sorted({(r.case.op, r.case.dtype) for r in widened})
    declared: set[str] = set()
    for op, dtype in pairs:
        decl = ctx.descriptor.operators[op]
        tolerance, precision = decl.tolerance(dtype), decl.precision(dtype)
        declared |= {f"rtol {tolerance[0]:g} atol {tolerance[1]:g}"} if tolerance else set()
        declared |= {f"{dtype} computed in {precision}"} if precision else set()
    spelled = ", ".join(sorted(declared))
    return (
        f"; {len(widened)} cases of {len(pairs)} operator/dtype pairs were judged with the wider tolerances "
        f"the descriptor declares ({spelled}) instead of the corpus's"
    )
