"""The parent side of the operator checks: which cases to run, batching and
bisection, and the results per case and per operator.

Cases are lowered in batches (one export, one lowering, one .pte, one load and
one execution for up to ``BATCH`` cases of one dtype: the fixed cost of a
lowering is seconds, a case adds a few hundredths). The cases a backend
declares unsupported are batched apart from the others, so that one of them
failing to lower costs no bisection of the cases that must pass. A batch whose
lowering, load or execution raises is split until the failing cases stand
alone, so every failure names one case: a lowering that failed after the
partitioners ran says which cases they claimed, the others are lowered together
once and only the claimed ones are split; otherwise the batch is halved. One
that crashes or times out is split as ``conformance.operators.isolation`` says,
so that the run ends in bounded time whatever the backend does. What a check learns is memoized in the
Context, so OPS-1 and OPS-2 in one process share the lowerings.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from conformance.comparison import assert_outputs_close, closeness
from conformance.context import Context
from conformance.operators import case_outcomes as co
from conformance.operators import corpus
from conformance.operators.isolation import Isolation
from conformance.operators.nan_modes import IGNORE
from conformance.operators.spec import EPS, TINY, Case, quantizable
from conformance.operators.subnormals import FLUSHED
from conformance.operators.support import OperatorDeclaration, quantized_by_backend
from conformance.outcomes import CheckFailed, VendorCrashed, VendorTimedOut
from conformance.vendor.process import VendorProcess, quote_log
from conformance.vendor.records import unpack
from conformance.vendor.task_registry import EXECUTE, LOWER_OPERATOR_BATCH

#: Cases per batch (benchmarks/operator_corpus.py measures the trade-off). A lowering's CPU time is linear in
#: its cases, nothing in it grows faster: on XNNPACK about 0.8 s plus 0.067 s per case (24 cases 2.4 s, 96
#: cases 7.2 s), on the reference backend 0.3 s plus 0.06 s per case, in a process that lowered before (its
#: first lowering also pays ExecuTorch's imports, 9 s with XNNPACK's pattern graphs). The fixed part is 11%
#: of a batch of 96: larger batches would save little.
BATCH = 96
#: Vendor processes that lower batches at once (the Context's own and helpers started for the phase): the
#: lowering is all CPU, one process per core.
LOWERING_PROCESSES = min(2, os.cpu_count() or 1)
TASK = LOWER_OPERATOR_BATCH
#: Whether a case that crashes the lowering alone stops the lowering of its operator's other cases (they are
#: not_run; isolation.py). A run does, so that it ends in bounded time; discovery (benchmarks/operator_corpus.py
#: --discover) does not: it must say of each case whether the partitioner claims it, whatever its neighbours do
#: (Vela crashes on a zero-element tensor: before, an Ethos-U operator's cases after its 'size0' went unlowered).
LOWERING_CRASH_STOPS_OPERATOR = True


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
    #: judged against the result under nan_mode IGNORE, which the descriptor declares for the operator
    nan_ignored: bool = False
    #: matched only the result with subnormals flushed, which the descriptor declares for the operator
    subnormals_flushed: bool = False
    #: CRASHED or TIMED_OUT when the case alone crashed or hung the vendor process (its reason is the
    #: lowering_error or the run_error)
    crash: str | None = None
    #: why the case was not lowered or not run (a crash before it; see isolation.py)
    not_run: str | None = None
    lowered: bool = True  # False: never lowered (not_run says why)
    #: the entries of the declaration's ``without`` that exclude the case ('channels_last', 'case:rank0')
    excluded_by: tuple[str, ...] = ()

    def delegated(self, backend_id: str) -> bool:
        return self.lowering_error is None and not self.cpu_ops and backend_id in self.backends

    def placement_problem(self, backend_id: str) -> str | None:
        """Why the case did not land in a delegate of ``backend_id``, or None."""
        if not self.lowered:
            return self.not_run or "not lowered"
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

    def outcome(self, backend_id: str, executed: bool) -> tuple[str, str | None]:
        """(one of case_outcomes.CASE_OUTCOMES, the reason); ``executed``: OPS-2 ran the delegated cases."""
        placement = self.placement_problem(backend_id)
        if self.not_run is not None and (placement is None or not self.lowered):
            return co.NOT_RUN, self.not_run
        if placement is not None:
            if self.excluded:
                declared = ", ".join(self.excluded_by) or "a trait of the case"
                return co.EXCLUDED, f"declared unsupported (without={declared}); {placement}"
            if self.crash is not None:
                return self.crash, placement
            return (co.LOWERING_ERROR if self.lowering_error is not None else co.FAILED_PLACEMENT), placement
        if self.ran:
            problem = self.numerics_problem()
            if problem is None:
                return co.PASSED, None
            return (self.crash or co.FAILED_NUMERICS), problem
        return co.NOT_RUN, (
            "delegated; not executed (OPS-2 did not run)" if not executed else "delegated; not executed"
        )

    def row(self, backend_id: str, executed: bool) -> dict[str, Any]:
        """The case's row of the report (case_outcomes.case_row)."""
        outcome, reason = self.outcome(backend_id, executed)
        return co.case_row(
            self.case.op,
            self.case.dtype,
            self.case.name,
            outcome,
            reason,
            excluded=self.excluded,
            delegated=self.delegated(backend_id),
            ran=self.ran,
            worst_error=self.worst if self.ran else None,
            tolerance_used=self.used if self.ran else None,
        )


def selected_pairs(ctx: Context) -> list[tuple[str, str]]:
    """The declared (operator, dtype) pairs, limited to the run's operator selection (--et-ops)."""
    wanted = getattr(ctx, "operator_selection", None)
    pairs = ctx.descriptor.operators.pairs()
    return [p for p in pairs if wanted is None or p[0] in wanted]


def _uncovered(ctx: Context) -> list[str]:
    """Declared pairs the corpus has no cases for, as 'op dtype' with the reason; pairs of one reason are
    named together before it, so that the reason is said once."""
    by_reason: dict[str, list[str]] = {}
    for op, dtype in selected_pairs(ctx):
        entry = corpus.operators().get(op)
        if entry is None and op.startswith("quantized_decomposed::"):
            why = "quantize/dequantize: the quantized cases of quantize_per_tensor and the QNT checks exercise them"
            by_reason.setdefault(why, []).append(op)
        elif entry is None:
            by_reason.setdefault("not in the corpus", []).append(op)
        elif dtype not in entry.dtypes:
            by_reason.setdefault("ATen does not define it, or the corpus lacks it", []).append(
                f"{op} {dtype}"
            )
    return [f"{', '.join(pairs)} ({why})" for why, pairs in by_reason.items()]


def planned(ctx: Context) -> list[tuple[Case, bool]]:
    """(case, excluded) for every case of every selected pair."""
    quantized = ctx.descriptor.quantized
    # A backend whose samples are all quantized (quantized.every_sample) is judged on the float cases of its
    # quantized_only operators quantized by its own quantizer (operators/tasks.py), not on the corpus's
    # hand-made quantized patterns; another backend runs only those patterns of such operators.
    every_sample = ctx.descriptor.quantizes_every_sample
    out = []
    for op, dtype in selected_pairs(ctx):
        declaration = ctx.descriptor.operators[op]
        for c in corpus.cases(op, dtype):
            if "dynamic" in c.traits and not declaration.dynamic:
                continue
            if "quantized" in c.traits and (quantized is None or every_sample):
                continue
            if (
                declaration.quantized_only
                and "quantized" not in c.traits
                and not (every_sample and quantizable(c))
            ):
                continue
            if any(other not in ctx.descriptor.operators for other in c.requires):
                continue
            out.append((c, declaration.excludes(c)))
    return out


def _batches(plan: list[tuple[Case, bool]], descriptor: Any) -> list[tuple[str, ...]]:
    """Batches of one dtype; the dynamic, the quantized, the declared-unsupported cases and those the backend's
    quantizer quantizes (``support.quantized_by_backend`` of ``descriptor``) apart."""
    by_kind: dict[tuple[str, bool, bool, bool, bool], list[str]] = {}
    for c, excluded in plan:
        kind = (
            c.dtype,
            "dynamic" in c.traits,
            "quantized" in c.traits,
            excluded,
            quantized_by_backend(descriptor, c),
        )
        by_kind.setdefault(kind, []).append(c.key)
    out = []
    for keys in by_kind.values():
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


def _lowering(ctx: Context, keys: tuple[str, ...], vendor: VendorProcess | None = None) -> dict[str, Any]:
    """The lowered batch ``keys`` (memoized, failures too), lowered in ``vendor`` (default: the Context's).
    A batch of several cases whose lowering failed after the partitioners ran is ``{'failed': message,
    'claimed': the keys of the cases a partitioner tagged}`` (``_lowered`` raises it)."""
    what = (
        f"lowering of {len(keys)} operator case(s)"
        if len(keys) > 1
        else f"lowering of {corpus.case(keys[0]).describe()}"
    )

    def lower() -> dict[str, Any]:  # through the run's lowering cache, in whichever process
        return ctx.call(TASK, list(keys), what=what, vendor=vendor)

    return ctx.shared(("operators", "lower", keys), lower)


def _lowered(ctx: Context, keys: tuple[str, ...]) -> dict[str, Any]:
    """The lowered batch ``keys``; CheckFailed if its lowering failed."""
    got = _lowering(ctx, keys)
    if "failed" in got:
        raise CheckFailed(got["failed"])
    return got


def _parts(keys: tuple[str, ...], got: dict[str, Any]) -> list[tuple[str, ...]]:
    """The parts a batch whose lowering failed (``got``, see _lowering) is lowered in next: the cases no
    partitioner claimed, together (what a backend fails on is mostly what it claimed: XNNPACK's corpus
    failed on 2 of 80 cases, where halving took 15 lowerings), then the claimed ones split as _split does;
    halves if no case, or every case, was claimed."""
    claimed = set(got.get("claimed", ()))
    unclaimed = tuple(k for k in keys if k not in claimed)
    if not claimed or not unclaimed:
        return _split(keys)
    return [unclaimed, *_split(tuple(k for k in keys if k in claimed))]


def _prefetch(ctx: Context, batches: list[tuple[str, ...]]) -> None:
    """Lowers ``batches`` in up to LOWERING_PROCESSES vendor processes at once, memoizing each result as
    ``_lowering`` does: the loop that follows meets them, and isolates the failures itself (an error a
    helper raised is forgotten, so that the loop meets it again in the Context's process, and the helper
    stops; a batch whose lowering failed after the partitioners ran is a result, kept like any other).
    After a crash or timeout no further batch is started here (the loop decides what runs next)."""
    count = min(LOWERING_PROCESSES, len(batches))
    if count < 2:
        return
    pending: queue.SimpleQueue[tuple[str, ...]] = queue.SimpleQueue()
    for keys in batches:
        pending.put(keys)
    crashed = threading.Event()

    def work(vendor: VendorProcess | None) -> None:
        while not crashed.is_set():
            try:
                keys = pending.get_nowait()
            except queue.Empty:
                return
            try:
                _lowering(ctx, keys, vendor)
            except CheckFailed as exc:
                if vendor is not None:  # a helper's failure is not kept: the loop meets it in its own process
                    ctx.forget(("operators", "lower", keys))
                    return
                if isinstance(exc, (VendorCrashed, VendorTimedOut)):
                    crashed.set()

    helpers = []
    for i in range(count - 1):
        scratch = ctx.scratch_dir() / f"lowering-{i + 1}"
        scratch.mkdir(exist_ok=True)
        helpers.append(ctx.new_vendor_process(scratch))
    pool = ThreadPoolExecutor(len(helpers), thread_name_prefix="lowering")
    try:
        others = [pool.submit(work, helper) for helper in helpers]
        work(None)  # the Context's own process, in this thread (so that Ctrl-C stops the wait at once)
        for future in others:
            future.result()
    finally:
        crashed.set()
        for helper in helpers:  # ends a helper's task at once if this thread was interrupted
            helper.close()
        pool.shutdown(wait=True)


def _lower_all(
    ctx: Context, keys: tuple[str, ...], found: dict[str, dict[str, Any]], isolation: Isolation
) -> None:
    """Lowers ``keys`` (bisecting failures); fills key -> the task's case record, {'error': ..., 'crash':
    None or the outcome} or {'not_run': why}."""
    for key in keys:
        why = isolation.not_run_reason(key)
        if why is not None:
            found[key] = {"not_run": why}
    keys = tuple(k for k in keys if k not in found)
    if not keys:
        return
    try:
        got = _lowering(ctx, keys)
    except (VendorCrashed, VendorTimedOut) as exc:
        isolation.crashed(keys, str(exc), timed_out=isinstance(exc, VendorTimedOut))
        if len(keys) == 1:
            found[keys[0]] = {"error": str(exc), "crash": exc.outcome}
        else:
            isolation.isolate(keys, lambda part: _lower_all(ctx, part, found, isolation))
        return
    except CheckFailed as exc:
        isolation.passed()  # the vendor process answered
        if len(keys) == 1:
            found[keys[0]] = {"error": str(exc)}
            return
        for part in _split(keys):
            _lower_all(ctx, part, found, isolation)
        return
    isolation.passed()
    if "failed" in got:
        for part in _parts(keys, got):
            _lower_all(ctx, part, found, isolation)
        return
    for record in got["cases"]:
        found[record["key"]] = dict(record, batch=keys)


def _lower_phase(ctx: Context, batches: list[tuple[str, ...]]) -> dict[str, dict[str, Any]]:
    isolation = Isolation("lowering", stop_operator=LOWERING_CRASH_STOPS_OPERATOR)
    lowered: dict[str, dict[str, Any]] = {}
    _prefetch(ctx, batches)
    for keys in batches:
        _lower_all(ctx, keys, lowered, isolation)
    return lowered


def _execution(ctx: Context, keys: tuple[str, ...]) -> list[Any]:
    """The outputs of the lowered batch ``keys`` on the runtime; CheckFailed if it fails."""

    def compute() -> list[Any]:
        lowered = _lowered(ctx, keys)
        what = f"{len(keys)} operator case(s)" if len(keys) > 1 else corpus.case(keys[0]).describe()
        result, log = ctx.call(
            EXECUTE, lowered["pte"], None, what, lowered["inputs"], what=f"execute of {what}", with_log=True
        )
        if "error" in result:
            raise CheckFailed(f"{result['step']} failed: {result['error']}{quote_log(log.splitlines())}")
        return unpack(result["outputs"])

    return ctx.shared(("operators", "execute", keys), compute)


def _run_all(
    ctx: Context, keys: tuple[str, ...], results: dict[str, CaseResult], isolation: Isolation
) -> None:
    """Lowers and executes ``keys`` together and compares each case; bisects a failing batch."""
    backend_id = ctx.descriptor.backend_id
    for key in keys:
        why = isolation.not_run_reason(key)
        if why is not None and results[key].delegated(backend_id):
            results[key].not_run = why
    keys = tuple(k for k in keys if results[k].not_run is None)
    if not keys:
        return
    try:
        lowered = _lowered(ctx, keys)
        outputs = _execution(ctx, keys)
    except (VendorCrashed, VendorTimedOut) as exc:
        isolation.crashed(keys, str(exc))
        delegated = tuple(k for k in keys if results[k].delegated(backend_id))
        if len(keys) == 1:
            if delegated:
                r = results[keys[0]]
                r.run_error, r.ran, r.crash = str(exc), True, exc.outcome
        elif delegated:
            isolation.isolate(delegated, lambda part: _run_all(ctx, part, results, isolation))
        return
    except CheckFailed as exc:
        isolation.passed()  # the vendor process answered
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
            _run_all(ctx, delegated, results, isolation)
            return
        for part in _split(keys):
            _run_all(ctx, part, results, isolation)
        return
    isolation.passed()
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
        declaration = ctx.descriptor.operators[r.case.op]
        rtol, atol, r.declared_tolerance = tolerance_for(declaration, r.case, record)
        ignored = record.get("expected_nan_ignored")
        if ignored is not None and declaration.nan_mode == IGNORE:
            expected, r.nan_ignored = unpack(ignored), True
        reference = NAN_IGNORED if r.nan_ignored else "eager PyTorch"
        if record.get("quantized_with"):
            reference = f"eager PyTorch of the case quantized with {record['quantized_with']} (convert_pt2e)"
        _compare(r, actual, expected, rtol, atol, reference)
        flushed = record.get("expected_flushed")
        if r.mismatch and flushed is not None and declaration.subnormals == FLUSHED:
            _compare_flushed(r, actual, unpack(flushed), rtol, atol)


def _compare_flushed(r: CaseResult, actual: list[Any], flushed: list[Any], rtol: float, atol: float) -> None:
    """Judges a case that did not match eager PyTorch against the result with subnormals flushed, which the
    declaration allows: a match passes it (``subnormals_flushed``); otherwise eager's mismatch stands, saying
    that the flushed result was not matched either."""
    kept = (r.mismatch, r.worst, r.used)
    r.mismatch = None  # _compare sets it on a mismatch only
    _compare(r, actual, flushed, rtol, atol, SUBNORMALS_FLUSHED)
    if r.mismatch is None:
        r.subnormals_flushed = True
        return
    r.mismatch, r.worst, r.used = kept
    r.mismatch = f"{r.mismatch}; nor does it match {SUBNORMALS_FLUSHED}"


def tolerance_for(
    declaration: OperatorDeclaration, case: Case, record: dict[str, Any]
) -> tuple[float, float, bool]:
    """(rtol, atol, declared) a case's results are judged with: the corpus's (the task's record) widened to
    what ``declaration`` (the descriptor's, for the case's operator) declares for its dtype, a tolerance or
    the corpus's tolerance for the lower precision it computes in; ``declared`` when that widened it."""
    rtol, atol = record["rtol"], record["atol"]
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


#: What a case of an operator declared subnormals "flushed" is compared with when it does not match eager's.
SUBNORMALS_FLUSHED = (
    "eager PyTorch with subnormal operands and results flushed to zero (the declared subnormals='flushed')"
)

#: What a case declared nan_mode "ignore" is compared with.
NAN_IGNORED = "eager PyTorch with its NaN operands left out (the declared nan_mode='ignore')"


def _compare(
    r: CaseResult, actual: list[Any], expected: list[Any], rtol: float, atol: float, reference: str
) -> None:
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
        assert_outputs_close(
            r.case.describe(), [a for a, _ in widened], [e for _, e in widened], rtol, atol, reference
        )
    except CheckFailed as exc:
        r.mismatch = str(exc).removeprefix(f"{r.case.describe()} ")
    r.worst, r.used = closeness(actual, expected, rtol, atol)


def results(ctx: Context, execute: bool) -> list[CaseResult]:
    """Every planned case, lowered (and with ``execute``, run and compared if delegated)."""
    plan = planned(ctx)
    out = {c.key: CaseResult(c, excluded) for c, excluded in plan}
    for r in out.values():
        if r.excluded:
            without = ctx.descriptor.operators[r.case.op].without
            r.excluded_by = tuple(t for t in without if t in r.case.traits or t == f"case:{r.case.name}")
    batches = _batches(plan, ctx.descriptor)
    lowered = ctx.shared(("operators", "lowered", tuple(out)), lambda: _lower_phase(ctx, batches))
    backend_id = ctx.descriptor.backend_id
    for key, record in lowered.items():
        r = out[key]
        if "not_run" in record:
            r.not_run, r.lowered = record["not_run"], False
            continue
        r.lowering_error = record.get("error")
        r.crash = record.get("crash")
        r.cpu_ops = tuple(record.get("cpu_ops", ()))
        r.backends = tuple(record.get("backends", ()))
    if execute:
        # Execute each lowered batch as it is, if it holds a delegated case: the outputs of the cases left on
        # ExecuTorch's CPU kernels are not judged (they fail OPS-1, unless declared unsupported).
        isolation = Isolation("execution")
        for keys in dict.fromkeys(record["batch"] for record in lowered.values() if "batch" in record):
            if any(out[k].delegated(backend_id) for k in keys):
                _run_all(ctx, keys, out, isolation)
    return list(out.values())


def summary(ctx: Context, found: list[CaseResult], executed: bool) -> list[dict[str, Any]]:
    """One row per declared (operator, dtype): counts, the worst error, the first failing case and every
    case's row (``case_results``, see case_outcomes.py)."""
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
            "case_results": [],
        }
    for r in found:
        row = rows[(r.case.op, r.case.dtype)]
        case = r.row(backend_id, executed)
        row["case_results"].append(case)
        row["cases"] += 1
        row["excluded"] += case["excluded"]
        row["delegated"] += case["delegated"]
        row["ran"] += case["ran"]
        row["passed"] += case["outcome"] == co.PASSED
        if case["outcome"] in co.FAILING and row["first_failing"] is None:
            row["first_failing"] = {"case": r.case.name, "reason": case["reason"]}
    for row in rows.values():
        row.update(co.extremes(row["case_results"]))
    return list(rows.values())


def uncovered(ctx: Context) -> list[str]:
    return _uncovered(ctx)
