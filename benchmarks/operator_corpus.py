"""Wall time of the operator corpus (OPS-1 and OPS-2 together) for one backend,
through the vendor process exactly as the suite runs it.

    .venv/bin/python benchmarks/operator_corpus.py [--backend ReferenceBackend] [--batch 48] [--ops a,b]
    .venv/bin/python benchmarks/operator_corpus.py --backend scoreboard.xnnpack.descriptor:DESCRIPTOR
    .venv/bin/python benchmarks/operator_corpus.py --backend scoreboard.xnnpack.descriptor:DESCRIPTOR --discover
    .venv/bin/python benchmarks/operator_corpus.py --backend ... --cache   # twice: a first run, then a rerun

Prints the cases, the wall time (vendor process start-up included, and
separately), the time per case, the CPU time of all processes (which a busy
machine changes much less than the wall time), the lowerings (every vendor
process's, bisection included, and the cases they lowered), and the per-operator rows. ``--discover``
declares every corpus operator for ``--dtype`` and prints, per operator, the
traits of the cases the partitioner did not claim (what a descriptor's
``without`` would say) and the operators it claimed nothing of; with ``--quantized-only``, every operator is
declared in quantized patterns only (``OperatorSupport.in_quantized_patterns``). A case whose lowering crashed
alone is named apart (it did not say whether the partitioner claims it), and it does not stop the lowering of its
operator's other cases as it does in a run (``runner.LOWERING_CRASH_STOPS_OPERATOR``): each case is judged on its
own, whatever its neighbours do. Cases still not lowered (after a timeout, or crashes in a row) are named apart.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _cpu_s() -> float:
    """User and system CPU seconds of this process and of its children that ended (the vendor processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="ReferenceBackend")
    parser.add_argument("--batch", type=int, default=None, help="cases per lowering (default: the runner's)")
    parser.add_argument("--ops", help="comma-separated operators (default: every declared one)")
    parser.add_argument("--discover", action="store_true", help="declare every corpus operator; lower only")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--vendor-python", help="the vendor's interpreter, as `run --vendor-python`")
    parser.add_argument(
        "--quantized-only",
        action="store_true",
        help="with --discover: declare every operator in quantized patterns only (an integer-only backend "
        "whose quantized.every_sample has the cases quantized by its own quantizer)",
    )
    parser.add_argument("--no-execute", action="store_true", help="OPS-1 only (lowering)")
    parser.add_argument(
        "--cache",
        action="store_true",
        help="go through the lowering cache, as a run does (run twice: the second is a rerun)",
    )
    args = parser.parse_args()

    from conformance.context import Context
    from conformance.vendor import interpreter as vendor_interpreter

    if args.vendor_python:
        vendor_interpreter.use(vendor_interpreter.probe(args.vendor_python))
    from conformance.descriptor import load_descriptor
    from conformance.operators import OperatorSupport, corpus, runner
    from conformance.vendor.process import VendorProcess

    lowerings: list[int] = []  # the cases of each lowering, in any vendor process
    call = VendorProcess.call

    def counted(self, task, *a, **k):
        if task == runner.TASK:
            lowerings.append(len(a[0]))
        return call(self, task, *a, **k)

    VendorProcess.call = counted  # type: ignore[method-assign]

    descriptor = load_descriptor(args.backend)
    if args.discover:
        every = [op for op, e in corpus.operators().items() if args.dtype in e.dtypes]
        declared = (
            OperatorSupport.in_quantized_patterns(*every)
            if args.quantized_only
            else OperatorSupport.of(args.dtype, *every)
        )
        descriptor = dataclasses.replace(descriptor, supported_ops=frozenset(), operators=declared)
        runner.LOWERING_CRASH_STOPS_OPERATOR = False
    if args.batch:
        runner.BATCH = args.batch
    from conformance.vendor.lowering_cache import LoweringCache

    # Named by its spec, as a run does (the cache's key holds it); a changed descriptor goes pickled.
    spec = None if args.discover else args.backend
    ctx = Context(descriptor, spec, lowering_cache=LoweringCache() if args.cache else None)
    if args.ops:
        ctx.operator_selection = frozenset(corpus.normalize(o) for o in args.ops.split(","))
    try:
        started = time.monotonic()
        ctx.vendor.call("ping", what="start-up", timeout=600)
        ready = time.monotonic()
        ctx.start_check("OPS-2")
        execute = not (args.discover or args.no_execute)
        found = runner.results(ctx, execute=execute)
        done = time.monotonic()
        rows = runner.summary(ctx, found, execute)
    finally:
        ctx.close()
    cpu = _cpu_s()
    n = len(found)
    print(
        f"backend {descriptor.backend_id}: {len(rows)} operator/dtype pairs, {n} cases, batch {runner.BATCH}, "
        f"{'lowered and executed' if execute else 'lowered only'}"
    )
    print(
        f"wall {done - started:.1f} s (vendor process start-up {ready - started:.1f} s, corpus {done - ready:.1f} s); "
        f"per case {(done - ready) / max(n, 1):.3f} s amortized ({(done - started) / max(n, 1):.3f} s with start-up)"
    )
    print(
        f"CPU {cpu:.1f} s in this process and the vendor processes ({cpu / max(n, 1):.3f} s per case; "
        f"wall times grow with the machine's load, {os.getloadavg()[0]:.1f} now, CPU times much less)"
    )
    print(
        f"lowerings {len(lowerings)} of {sum(lowerings)} cases in all (sizes {sorted(lowerings, reverse=True)})"
    )
    if args.discover:
        own = descriptor.backend_id
        by_op: dict[str, list] = {}
        for r in found:
            by_op.setdefault(r.case.op, []).append(r)
        for op, rs in by_op.items():
            claimed = [r for r in rs if r.placement_problem(own) is None]
            # crashed alone or not lowered: whether the partitioner claims the case is not known
            unknown = [r for r in rs if not r.lowered or r.crash is not None]
            missed = [r for r in rs if r.placement_problem(own) and not any(r is u for u in unknown)]
            if len(missed) == len(rs):
                print(f"  {op}: nothing claimed ({missed[0].placement_problem(own)[:100]})")
            elif missed:
                traits = sorted({t for r in missed for t in r.case.traits})
                names = ", ".join(r.case.name for r in missed)
                print(f"  {op}: {len(claimed)}/{len(rs)} claimed; not: {names} (traits {traits})")
            elif unknown:
                print(f"  {op}: {len(claimed)}/{len(rs)} claimed")
            else:
                print(f"  {op}: all {len(rs)} claimed")
            for r in unknown:
                why = r.placement_problem(own) or ""
                print(f"    not known: {r.case.name} (traits {sorted(r.case.traits)}): {why[:160]}")
        return 0
    for row in rows:
        failing = row["first_failing"]
        print(
            f"  {row['op']:34} {row['dtype']:8} {row['cases']:3} cases {row['delegated']:3} delegated "
            f"{row['passed']:3}/{row['ran']:<3} passed  worst {row['worst_error']}"
            + (f"  FIRST FAILING {failing['case']}: {failing['reason'][:160]}" if failing else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
