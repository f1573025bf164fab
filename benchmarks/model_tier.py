"""Wall time of the model tier (``run --models``) for one backend, through the vendor process exactly as
the suite runs it, and each model's row.

    .venv/bin/python benchmarks/model_tier.py [--backend ReferenceBackend] [--models all] [--repeat 1]

Prints the vendor process start-up, then per model the wall time of its row (make, eager forward,
export, lowering and serialization in the vendor process, then load, execute and compare), the
delegated nodes and the worst error, and the total; with ``--repeat N`` the tier runs N times in the
same vendor process (the first pays the imports of the lowering path). The machine's load average is
printed too: on a shared machine the wall times grow with it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "operators"))  # broken_operators


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="ReferenceBackend")
    parser.add_argument("--models", default="all")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()

    from conformance.context import Context
    from conformance.descriptor import load_descriptor
    from conformance.models.runner import model_result, parse_models
    from conformance.results.result_tables import MODELS
    from conformance.results.table_text import render

    names = parse_models(args.models) or ()
    descriptor = load_descriptor(args.backend)
    ctx = Context(descriptor, args.backend)
    try:
        started = time.monotonic()
        ctx.vendor.call("ping", what="start-up", timeout=600)
        ready = time.monotonic()
        print(f"backend {descriptor.backend_id}: vendor process start-up {ready - started:.1f} s")
        for round_ in range(args.repeat):
            rows, began = [], time.monotonic()
            for name in names:
                ctx.start_check(f"model {name}")
                rows.append(model_result(ctx, name))
            total = time.monotonic() - began
            print(
                f"round {round_ + 1}: {len(rows)} models in {total:.1f} s ({total / max(len(rows), 1):.1f} s per model)"
            )
            for row in rows:
                print(f"  {row['model']:<14} {row['duration_s']:5.1f} s  {row['result']}")
        print()
        for line in render(MODELS, rows, 140):
            print(line)
    finally:
        ctx.close()
    print(f"\nload average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
