"""What the runner path costs per check: the runtime checks of the reference
backend run in-process (the vendor process, through ExecuTorch's Python
bindings) against the same checks through the C++ runner on a target
(a bundle copied there, the runner started, the results copied back).

    .venv/bin/python benchmarks/runner_overhead.py [--runner build/runner/conformance_runner]
        [--target local] [--rounds 5]

Build the runner first (docs/device-runner.md). Lowering is done once and
shared, and each path loads the runtime once before the timing, so the
figures are the runtime part of each check. Prints, per check, the median
wall time in milliseconds on each path and their ratio, then the per-check
overhead of the runner path (mean of the differences) and the ratio of the
totals. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

CHECKS = ["RT-1", "RT-2", "RT-3", "RT-4", "RT-5", "RT-6", "NDATA-3", "NDATA-4"]


def _time_checks(ctx, checks, rounds: int) -> dict[str, float]:
    """Median milliseconds of each check over ``rounds`` runs (after one untimed warm-up run)."""
    from conformance.outcomes import CheckFailed

    by_id = {c.id: c for c in checks}
    times: dict[str, list[float]] = {i: [] for i in CHECKS}
    for round_ in range(rounds + 1):
        for check_id in CHECKS:
            ctx.start_check(check_id)
            start = time.perf_counter()
            try:
                by_id[check_id].run(ctx)
            except CheckFailed as exc:
                sys.exit(f"{check_id} failed, so its time means nothing: {exc}")
            if round_:
                times[check_id].append((time.perf_counter() - start) * 1000)
    return {i: statistics.median(t) for i, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runner", default="build/runner/conformance_runner")
    parser.add_argument("--target", default="local")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not Path(args.runner).exists():
        sys.exit(f"no runner at {args.runner}: build it first (docs/device-runner.md)")

    from conformance.checks import all_checks
    from conformance.context import Context
    from conformance.descriptor import load_descriptor

    ctx = Context(load_descriptor("ReferenceBackend"), "ReferenceBackend", timeout=300)
    try:
        checks = all_checks()
        in_process = _time_checks(ctx, checks, args.rounds)
        ctx.use_target(args.target, args.runner)
        runner = _time_checks(ctx, checks, args.rounds)
    finally:
        ctx.close()

    print(f"runtime checks of ReferenceBackend, median of {args.rounds} rounds (ms); runner on {args.target}")
    print(f"{'check':8} {'in-process':>11} {'runner':>9} {'ratio':>7}")
    for check_id in CHECKS:
        a, b = in_process[check_id], runner[check_id]
        print(f"{check_id:8} {a:11.1f} {b:9.1f} {b / a if a else float('inf'):6.1f}x")
    total_a, total_b = sum(in_process.values()), sum(runner.values())
    overhead = (total_b - total_a) / len(CHECKS)
    print(f"{'total':8} {total_a:11.1f} {total_b:9.1f} {total_b / total_a:6.1f}x")
    print(f"per-check overhead of the runner path: {overhead:.1f} ms (ratio {total_b / total_a:.1f}x)")


if __name__ == "__main__":
    main()
