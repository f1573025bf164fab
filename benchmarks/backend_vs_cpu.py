"""Execute latency of the reference backend divided by ExecuTorch's own CPU
kernels on the same graph, measured in one process.

    .venv/bin/python benchmarks/backend_vs_cpu.py [--iterations 2000] [--repeats 7]

Prints, per model, the median time per execute() of both programs and the
ratio (reference / CPU). Below 1.0 the delegate is faster. Both programs go
through the same Python runtime API, so its overhead is in both figures.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime

import reference_backend


class ElementwiseChain(torch.nn.Module):
    def forward(self, x, y):
        a = x * y + x
        b = torch.relu(a) - y
        c = b * b + a
        return torch.relu(c - x) * y


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 64)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


_buffers = []  # Runtime.load_program(bytes) does not keep the bytes alive


def load(model, inputs, partitioner):
    edge = to_edge_transform_and_lower(torch.export.export(model, inputs), partitioner=partitioner)
    _buffers.append(edge.to_executorch().buffer)
    return Runtime.get().load_program(_buffers[-1]).load_method("forward")


def per_call(method, inputs, iterations: int) -> float:
    args = list(inputs)
    start = time.perf_counter()
    for _ in range(iterations):
        method.execute(args)
    return (time.perf_counter() - start) / iterations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    reference_backend.load_runtime()
    torch.manual_seed(0)
    cases = {
        "elementwise chain 8x256": (ElementwiseChain(), (torch.randn(8, 256), torch.randn(8, 256))),
        "MLP 16x64-128-64": (MLP().eval(), (torch.randn(16, 64),)),
    }
    print(f"{'model':26} {'reference us':>13} {'cpu us':>9} {'ratio':>7}")
    for name, (model, inputs) in cases.items():
        ref = load(model, inputs, [reference_backend.ReferencePartitioner()])
        cpu = load(model, inputs, None)
        torch.testing.assert_close(
            ref.execute(list(inputs))[0], cpu.execute(list(inputs))[0], rtol=1e-4, atol=1e-4
        )
        ref_times, cpu_times = [], []
        for _ in range(args.repeats):  # interleaved, so drift hits both alike
            ref_times.append(per_call(ref, inputs, args.iterations))
            cpu_times.append(per_call(cpu, inputs, args.iterations))
        r, c = statistics.median(ref_times), statistics.median(cpu_times)
        print(f"{name:26} {r * 1e6:13.2f} {c * 1e6:9.2f} {r / c:7.3f}")


if __name__ == "__main__":
    main()
