"""Execute latency of the reference runtime, int8 against float32, on a small
MLP and a small conv net (the same weights; int8 through the PT2E flow with
reference_backend.quantizer.ReferenceQuantizer). Prints median and p90 of
``method.execute`` in microseconds.

    .venv/bin/python benchmarks/int8_vs_float.py [--runs 200]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

import reference_backend
from reference_backend import ReferencePartitioner
from reference_backend.quantizer import ReferenceQuantizer


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2, self.fc3 = (
            torch.nn.Linear(256, 256),
            torch.nn.Linear(256, 256),
            torch.nn.Linear(256, 64),
        )

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


class ConvNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1, self.c2 = torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x):
        y = torch.relu(self.c1(x))
        return torch.relu(self.c2(y) + y)


def lower(module, inputs):
    edge = to_edge_transform_and_lower(
        torch.export.export(module, inputs), partitioner=[ReferencePartitioner()]
    )
    return edge.to_executorch().buffer


def quantized(module, inputs):
    prepared = prepare_pt2e(torch.export.export(module, inputs).module(), ReferenceQuantizer())
    for _ in range(8):
        prepared(*[torch.randn_like(t) for t in inputs])
    return convert_pt2e(prepared)


def timed(pte: bytes, inputs, runs: int) -> tuple[float, float]:
    program = Runtime.get().load_program(pte)
    method = program.load_method("forward")
    for _ in range(10):
        method.execute(list(inputs))
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        method.execute(list(inputs))
        samples.append((time.perf_counter() - start) * 1e6)
    samples.sort()
    return statistics.median(samples), samples[int(0.9 * len(samples))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    reference_backend.load_runtime()
    torch.manual_seed(0)
    print(f"{'model':<28}{'float32 median/p90 us':>24}{'int8 median/p90 us':>22}{'int8/float':>12}")
    for name, module, inputs in (
        ("MLP 256-256-256-64, batch 8", MLP().eval(), (torch.randn(8, 256),)),
        ("conv net 3-16-16, 1x32x32", ConvNet().eval(), (torch.randn(1, 3, 32, 32),)),
    ):
        f_med, f_p90 = timed(lower(module, inputs), inputs, args.runs)
        q_med, q_p90 = timed(lower(quantized(module, inputs), inputs), inputs, args.runs)
        print(f"{name:<28}{f_med:>12.1f}/{f_p90:<11.1f}{q_med:>10.1f}/{q_p90:<11.1f}{q_med / f_med:>10.2f}x")


if __name__ == "__main__":
    main()
