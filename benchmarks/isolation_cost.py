"""What isolating the vendor's code costs: one call into the vendor process
against the same work done in this process, for the reference backend.

    .venv/bin/python benchmarks/isolation_cost.py [--calls 50]

Prints medians (milliseconds) of: a round trip that does nothing (ping), one
load + execute of the 'mlp' sample through the vendor process and in this
process, their ratio, and the start of a vendor process (spawn, import torch,
executorch and the descriptor). Run it on a quiet machine; the figures are
whole-call wall times.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def _median_ms(fn, calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()

    from executorch.runtime import Runtime

    from conformance.context import Context
    from conformance.vendor.process import VendorProcess
    from reference_backend.conformance import DESCRIPTOR
    from reference_backend.runtime import load_runtime

    with tempfile.TemporaryDirectory() as scratch:
        start = time.perf_counter()
        vendor = VendorProcess("ReferenceBackend", Path(scratch))
        vendor.call("ping", what="ping", timeout=300)
        startup = (time.perf_counter() - start) * 1000
        vendor.close()

    ctx = Context(DESCRIPTOR, "ReferenceBackend")
    pte = ctx.pte("mlp")
    inputs = ctx.sample("mlp").inputs
    ctx.execute(pte, inputs, "sample 'mlp'")  # the runtime is loaded once, outside the timing
    ping = _median_ms(lambda: ctx.vendor.call("ping", what="ping", timeout=60), args.calls)
    isolated = _median_ms(lambda: ctx.execute(pte, inputs, "sample 'mlp'"), args.calls)
    ctx.close()

    load_runtime()
    keep = []

    def in_process():
        program = Runtime.get().load_program(pte)
        keep.append(program)
        program.load_method("forward").execute(list(inputs))

    local = _median_ms(in_process, args.calls)
    print(f"vendor process start (spawn + imports): {startup:8.1f} ms")
    print(f"round trip doing nothing (ping):        {ping:8.2f} ms  median of {args.calls}")
    print(f"load + execute 'mlp', vendor process:   {isolated:8.2f} ms")
    print(f"load + execute 'mlp', in this process:  {local:8.2f} ms")
    print(f"ratio isolated / in-process:            {isolated / local:8.2f}")


if __name__ == "__main__":
    main()
