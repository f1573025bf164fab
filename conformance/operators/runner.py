"""The parent side of the operator checks: which cases to run, batching and
bisection, and the results per case and per operator.

Cases are lowered in batches (one export, one lowering, one .pte, one load and
one execution for up to ``BATCH`` cases of one dtype: the fixed cost of a
lowering is about a second, a case adds a few hundredths). A batch whose
lowering, load or execution fails, crashes or times out is split in halves
until the failing cases stand alone, so every failure names one case. What a
check learns is memoized in the Context, so OPS-1 and OPS-2 in one process
share the lowerings.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from conformance.context import Context
from conformance.operators import corpus
from conformance.operators.spec import EPS, TINY, Case
from conformance.outcomes import CheckFailed
from conformance.probes import assert_outputs_close
from conformance.vendor_worker import unpack

#: Cases per batch (benchmarks/operator_corpus.py measures the trade-off).
BATCH = 48
TASK = "conformance.operators.tasks:lower_batch"


@dataclasses.dataclass
class CaseResult:
    case: Case
    excluded: bool  # a trait of the case is declared unsupported: it need not be claimed
    lowering_error: str | None = None
    cpu_ops: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    run_error: str | None = None
    mismatch: str | None = None
    worst: float | None = None
    used: float | None = None
    rtol: float | None = None
    atol: float | None = None
    ran: bool = False
    #: judged with a tolerance the descriptor declares (OperatorDeclaration.tolerances), wider than the corpus's
    declared_tolerance: bool = False

    def delegated(self, backend_id: str) -> bool:
        return self.lowering_error is None and not self.cpu_ops and backend_id in self.backends

    def placement_problem(self, backend_id: str) -> str | None:
        """Why the case did not land in a delegate of ``backend_id``, or None."""
        if self.lowering_error is not None:
            return f"lowering failed: {self.lowering_error}"
        if self.cpu_ops:
            return f"left on ExecuTorch's CPU kernels: {', '.join(self.cpu_ops)}"
        if backend_id not in self.backends:
            other = f" (delegated to {', '.join(self.backends)})" if self.backends else ""
            return f"no delegate of {backend_id} computes it{other}"
        return None

    def numerics_problem(self) -> str | None:
        return self.run_error or self.mismatch


def selected_pairs(ctx: Context) -> list[tuple[str, str]]:
    """The declared (operator, dtype) pairs, limited to the run's operator selection (--et-ops)."""
    wanted = getattr(ctx, "operator_selection", None)
    pairs = ctx.descriptor.operators.pairs()
    return [p for p in pairs if wanted is None or p[0] in wanted]


def _uncovered(ctx: Context) -> list[str]:
    """Declared pairs the corpus has no cases for, as 'op dtype' with the reason."""
    out = []
    for op, dtype in selected_pairs(ctx):
        entry = corpus.operators().get(op)
        if entry is None and op.startswith("quantized_decomposed::"):
            out.append(
                f"{op} (quantize/dequantize: the quantized cases of quantize_per_tensor and the QNT checks exercise it)"
            )
        elif entry is None:
            out.append(f"{op} (not in the corpus)")
        elif dtype not in entry.dtypes:
            out.append(f"{op} {dtype} (ATen does not define it, or the corpus lacks it)")
    return out


def planned(ctx: Context) -> list[tuple[Case, bool]]:
    """(case, excluded) for every case of every selected pair."""
    out = []
    for op, dtype in selected_pairs(ctx):
        declaration = ctx.descriptor.operators[op]
        for c in corpus.cases(op, dtype):
            if "dynamic" in c.traits and not declaration.dynamic:
                continue
            if "quantized" in c.traits and ctx.descriptor.quantized is None:
                continue
            if any(other not in ctx.descriptor.operators for other in c.requires):
                continue
            out.append((c, declaration.excludes(c)))
    return out


def _batches(cases: list[Case]) -> list[tuple[str, ...]]:
    """Batches of one dtype; the dynamic and the quantized cases lowered apart from the others."""
    by_dtype: dict[tuple[str, bool, bool], list[str]] = {}
    for c in cases:
        by_dtype.setdefault((c.dtype, "dynamic" in c.traits, "quantized" in c.traits), []).append(c.key)
    out = []
    for keys in by_dtype.values():
        out += [tuple(keys[i : i + BATCH]) for i in range(0, len(keys), BATCH)]
    return out


#: A failing batch of at most this many cases is split into single cases rather than halves (when all of
#: a small batch fails, as for an undeclared dtype, halving costs 2n-1 lowerings instead of n).
SINGLES = 6


def _split(keys: tuple[str, ...]) -> list[tuple[str, ...]]:
    if len(keys) <= SINGLES:
        return [(k,) for k in keys]
    half = len(keys) // 2
    return [keys[:half], keys[half:]]


def _lowering(ctx: Context, keys: tuple[str, ...]) -> dict[str, Any]:
    what = (
        f"lowering of {len(keys)} operator case(s)"
        if len(keys) > 1
        else f"lowering of {corpus.case(keys[0]).describe()}"
    )
    return ctx._shared(("operators", "lower", keys), lambda: ctx._call(TASK, list(keys), what=what))


def _lower_all(ctx: Context, keys: tuple[str, ...], found: dict[str, dict[str, Any]]) -> None:
    """Lowers ``keys`` (bisecting failures); fills key -> the task's case record or {'error': ...}."""
    try:
        got = _lowering(ctx, keys)
    except CheckFailed as exc:
        if len(keys) == 1:
            found[keys[0]] = {"error": str(exc)}
            return
        for part in _split(keys):
            _lower_all(ctx, part, found)
        return
    for record in got["cases"]:
        found[record["key"]] = dict(record, batch=keys)


def _execution(ctx: Context, keys: tuple[str, ...]) -> list[Any]:
    """The outputs of the lowered batch ``keys`` on the runtime; CheckFailed if it fails."""

    def compute() -> list[Any]:
        lowered = _lowering(ctx, keys)
        what = f"{len(keys)} operator case(s)" if len(keys) > 1 else corpus.case(keys[0]).describe()
        result, log = ctx._call(
            "execute", lowered["pte"], None, what, lowered["inputs"], what=f"execute of {what}", with_log=True
        )
        if "error" in result:
            tail = " | ".join(line for line in log.splitlines() if line.strip())[-600:]
            raise CheckFailed(
                f"{result['step']} failed: {result['error']}"
                + (f"; the runtime logged: {tail}" if tail else "")
            )
        return unpack(result["outputs"])

    return ctx._shared(("operators", "execute", keys), compute)


def _run_all(ctx: Context, keys: tuple[str, ...], results: dict[str, CaseResult]) -> None:
    """Lowers and executes ``keys`` together and compares each case; bisects a failing batch."""
    backend_id = ctx.descriptor.backend_id
    try:
        lowered = _lowering(ctx, keys)
        outputs = _execution(ctx, keys)
    except CheckFailed as exc:
        if len(keys) == 1:
            if results[keys[0]].delegated(backend_id):
                results[keys[0]].run_error = str(exc)
                results[keys[0]].ran = True
            return
        # The outputs of cases left on ExecuTorch's CPU kernels are not judged, and one of them may be what
        # failed: lower the delegated cases alone once before halving (each half is another lowering).
        delegated = tuple(k for k in keys if results[k].delegated(backend_id))
        if not delegated:
            return
        if len(delegated) < len(keys):
            _run_all(ctx, delegated, results)
            return
        for part in _split(keys):
            _run_all(ctx, part, results)
        return
    at = 0
    for record in lowered["cases"]:
        r = results[record["key"]]
        expected = unpack(record["expected"])
        actual = outputs[at : at + len(expected)]
        at += len(expected)
        if not r.delegated(backend_id):
            continue  # on ExecuTorch's CPU kernels: not the backend's result
        r.ran = True
        if record["cpu_ops"] or backend_id not in record["backends"]:
            r.run_error = "lowered again with other cases (bisecting a failure), it was not delegated: " + (
                ", ".join(record["cpu_ops"]) or "no delegate of the backend"
            )
            continue
        rtol, atol, r.declared_tolerance = tolerance_for(ctx, r.case, record)
        _compare(r, actual, expected, rtol, atol)


def tolerance_for(ctx: Context, case: Case, record: dict[str, Any]) -> tuple[float, float, bool]:
    """(rtol, atol, declared) a case's results are judged with: the corpus's (the task's record) widened to
    what the descriptor declares for the case's operator and dtype, a tolerance or the corpus's tolerance
    for the lower precision it computes in; ``declared`` when that widened it."""
    rtol, atol = record["rtol"], record["atol"]
    declaration = ctx.descriptor.operators[case.op]
    wider = [declaration.tolerance(case.dtype)]
    precision = declaration.precision(case.dtype)
    if precision is not None and not case.tolerance.steps:
        rtol_p, atol_p = case.tolerance.bounds(precision, record.get("magnitude", 1.0), case.reduction)
        # at least one rounding to the precision: even a copy's values are rounded to it
        wider.append((max(rtol_p, EPS[precision]), max(atol_p, TINY[precision])))
    found = [(r, a) for r, a in (w for w in wider if w) if r > rtol or a > atol]
    if not found:
        return rtol, atol, False
    return max(rtol, *(r for r, _ in found)), max(atol, *(a for _, a in found)), True


def _compare(r: CaseResult, actual: list[Any], expected: list[Any], rtol: float, atol: float) -> None:
    import torch

    r.rtol, r.atol = rtol, atol
    # int8 results (quantized cases) are compared as int32: allclose would subtract them in int8.
    small = (torch.int8, torch.uint8)
    widened = [
        (a.to(torch.int32), e.to(torch.int32))
        if isinstance(a, torch.Tensor) and a.dtype == e.dtype and a.dtype in small
        else (a, e)
        for a, e in zip(actual, expected)
    ]
    try:
        assert_outputs_close(r.case.describe(), [a for a, _ in widened], [e for _, e in widened], rtol, atol)
    except CheckFailed as exc:
        r.mismatch = str(exc).removeprefix(f"{r.case.describe()} ")
    worst, used = 0.0, 0.0
    for a, e in zip(actual, expected):
        if not isinstance(a, torch.Tensor) or a.shape != e.shape or a.numel() == 0:
            continue
        a64, e64 = a.double(), e.double()
        same = (a64 == e64) | (torch.isnan(a64) & torch.isnan(e64))
        diff = torch.where(same, torch.zeros_like(a64), (a64 - e64).abs()).nan_to_num(nan=float("inf"))
        bound = atol + rtol * e64.abs().nan_to_num(nan=0.0, posinf=0.0)
        ratio = torch.where(diff == 0, torch.zeros_like(diff), diff / bound)
        worst, used = max(worst, float(diff.max())), max(used, float(ratio.max()))
    r.worst, r.used = worst, used


def results(ctx: Context, execute: bool) -> list[CaseResult]:
    """Every planned case, lowered (and with ``execute``, run and compared if delegated)."""
    plan = planned(ctx)
    out = {c.key: CaseResult(c, excluded) for c, excluded in plan}
    lowered: dict[str, dict[str, Any]] = {}
    for keys in _batches([c for c, _ in plan]):
        _lower_all(ctx, keys, lowered)
    backend_id = ctx.descriptor.backend_id
    for key, record in lowered.items():
        r = out[key]
        r.lowering_error = record.get("error")
        r.cpu_ops = tuple(record.get("cpu_ops", ()))
        r.backends = tuple(record.get("backends", ()))
    if execute:
        # Execute each lowered batch as it is, if it holds a delegated case: the outputs of the cases left on
        # ExecuTorch's CPU kernels are not judged (they fail OPS-1, unless declared unsupported).
        for keys in dict.fromkeys(record["batch"] for record in lowered.values() if "batch" in record):
            if any(out[k].delegated(backend_id) for k in keys):
                _run_all(ctx, keys, out)
    return list(out.values())


def summary(ctx: Context, found: list[CaseResult]) -> list[dict[str, Any]]:
    """One row per declared (operator, dtype): counts, the worst error and the first failing case."""
    backend_id = ctx.descriptor.backend_id
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for op, dtype in selected_pairs(ctx):
        rows[(op, dtype)] = {
            "op": op,
            "dtype": dtype,
            "cases": 0,
            "excluded": 0,
            "delegated": 0,
            "ran": 0,
            "passed": 0,
            "worst_error": None,
            "tolerance_used": None,
            "first_failing": None,
        }
    for r in found:
        row = rows[(r.case.op, r.case.dtype)]
        row["cases"] += 1
        row["excluded"] += r.excluded
        placement = r.placement_problem(backend_id)
        row["delegated"] += placement is None
        problem = None if r.excluded and placement else placement
        if r.ran:
            row["ran"] += 1
            if r.numerics_problem() is None:
                row["passed"] += 1
            problem = problem or r.numerics_problem()
        if r.worst is not None:
            row["worst_error"] = max(row["worst_error"] or 0.0, r.worst)
            row["tolerance_used"] = round(max(row["tolerance_used"] or 0.0, r.used or 0.0), 4)
        if problem and row["first_failing"] is None:
            row["first_failing"] = {"case": r.case.name, "reason": problem}
    return list(rows.values())


def uncovered(ctx: Context) -> list[str]:
    return _uncovered(ctx)
