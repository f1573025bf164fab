"""XNNPACK delegate (executorch 1.5.1): float32 elementwise and pooling operators give other results
than eager PyTorch for NaN, infinities and values at the edge of float32.

Standalone (torch, executorch 1.5.1; no conformance-suite code):

    python xnnpack_nan_inf_results.py

What it does: for each operator, a one-operator program over a tensor of edge values (0, -0, +-1,
+-4 x the smallest normal, +-max/4, 1e-3, -2.5, eps, 1e8, inf, -inf, NaN) is lowered with
XnnpackPartitioner, run with ExecuTorch's Python runtime and compared element by element with eager
PyTorch (NaN matches NaN; otherwise within 8 ULP).

Seen (x86-64, executorch 1.5.1): maximum and minimum drop a NaN first operand but keep a NaN second one
(maximum(nan, 0) is 0, maximum(-2.5, nan) is NaN: neither torch's propagation nor IEEE maxNum/minNum),
max_pool2d gives a number for a window holding NaN, not always its largest, log_sigmoid(NaN) is not NaN,
and rsqrt(0) and rsqrt(-0) are NaN (inf and -inf in eager). XNNPACK picks its kernels by the CPU's
features: on a CPU with AVX-512 (2026-12-04) sigmoid and silu of +-max/4 are NaN too (1 and 0, max/4 and
-0 in eager) and log(NaN) is NaN; on an AVX2-only CPU (2026-12-03) sigmoid and silu agree and log(NaN) is
88.78. Each line names the inputs, eager's result and XNNPACK's.

Exit status: 1 while any operator differs, 0 when all agree.
"""

from __future__ import annotations

import sys

import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime

F = torch.finfo(torch.float32)
EDGE = [0.0, -0.0, 1.0, -1.0, F.tiny * 4, -F.tiny * 4, F.max / 4, -F.max / 4, 1e-3, -2.5, F.eps, 1e8]
SPECIAL = [float("inf"), float("-inf"), float("nan")]


class Op(torch.nn.Module):
    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def values(pool: list[float], shape: tuple[int, ...]) -> torch.Tensor:
    n = 1
    for d in shape:
        n *= d
    return torch.tensor([pool[i % len(pool)] for i in range(n)], dtype=torch.float32).reshape(shape)


CASES = {
    "maximum": (
        torch.maximum,
        (values(EDGE + SPECIAL, (15,)), values(list(reversed(EDGE + SPECIAL)), (15,))),
    ),
    "minimum": (
        torch.minimum,
        (values(EDGE + SPECIAL, (15,)), values(list(reversed(EDGE + SPECIAL)), (15,))),
    ),
    "max_pool2d": (
        lambda x: torch.nn.functional.max_pool2d(x, 2),
        (values([1.0, float("nan"), -2.0, 3.0], (1, 1, 4, 4)),),
    ),
    "log_sigmoid": (torch.nn.functional.logsigmoid, (values(EDGE + SPECIAL, (15,)),)),
    "sigmoid": (torch.sigmoid, (values(EDGE, (12,)),)),
    "silu": (torch.nn.functional.silu, (values(EDGE, (12,)),)),
    "rsqrt": (torch.rsqrt, (values(EDGE + SPECIAL, (15,)),)),
    "log": (torch.log, (values(EDGE + SPECIAL, (15,)),)),
}


def run_on_xnnpack(fn, inputs) -> torch.Tensor:
    program = torch.export.export(Op(fn).eval(), inputs)
    edge = to_edge_transform_and_lower(program, partitioner=[XnnpackPartitioner()])
    pte = edge.to_executorch().buffer
    return Runtime.get().load_program(pte).load_method("forward").execute(list(inputs))[0]


def differences(actual: torch.Tensor, expected: torch.Tensor) -> list[int]:
    a, e = actual.double().flatten(), expected.double().flatten()
    both_nan = torch.isnan(a) & torch.isnan(e)
    close = (a == e) | ((a - e).abs() <= 8 * F.eps * e.abs())
    return [i for i in range(len(e)) if not (both_nan[i] or close[i])]


def main() -> int:
    failing = 0
    for name, (fn, inputs) in CASES.items():
        expected = fn(*inputs)
        actual = run_on_xnnpack(fn, inputs)
        bad = differences(actual, expected)
        print(f"{name}: {'agrees' if not bad else f'{len(bad)} element(s) differ'}")
        for i in bad[:6]:
            args = (
                ", ".join(f"{float(x.flatten()[i]):.6g}" for x in inputs)
                if inputs[0].numel() == expected.numel()
                else "(window)"
            )
            print(
                f"    {name}({args}): eager {float(expected.flatten()[i]):.6g}, XNNPACK {float(actual.flatten()[i]):.6g}"
            )
        failing += bool(bad)
    # Which NaN semantics maximum has: eager propagates (NaN, NaN), IEEE maxNum / TOSA's IGNORE leaves it out
    # (0, 0); a result that depends on which operand is NaN is neither.
    nan, zero = torch.tensor([float("nan"), 0.0]), torch.tensor([0.0, float("nan")])
    got = run_on_xnnpack(torch.maximum, (nan, zero))
    print(
        f"maximum(nan, 0) = {float(got[0]):g} and maximum(0, nan) = {float(got[1]):g} on XNNPACK "
        "(eager: nan and nan; IEEE maxNum: 0 and 0)"
    )
    print(f"DEFECT: {failing} operator(s) differ from eager PyTorch" if failing else "all operators agree")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
