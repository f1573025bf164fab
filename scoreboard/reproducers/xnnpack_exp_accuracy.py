"""XNNPACK delegate (executorch 1.5.1): exp is more than 4 ULP from the correctly rounded result.

Standalone (torch, executorch 1.5.1; no conformance-suite code):

    python xnnpack_exp_accuracy.py

What it does: exp of 4096 standard normal float32 values (and of 0.5 .. 16 in steps), lowered with
XnnpackPartitioner and run with ExecuTorch's Python runtime; eager PyTorch's float32 exp and XNNPACK's
are compared with exp computed in float64 and rounded, in units in the last place (ULP) of the result.

Seen (x86-64, executorch 1.5.1): eager is within 0.54 ULP; XNNPACK reaches 13.1 ULP (exp(14.5) =
1982759.3 computed as 1982757.6), 54 of the 4344 values above 4 ULP. libm-quality implementations
are within 1-3 ULP; the conformance corpus allows transcendental functions 4 ULP.

Exit status: 1 while XNNPACK's worst error is above 4 ULP, 0 when it is within.
"""

from __future__ import annotations

import sys

import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime

BOUND_ULP = 4


class Exp(torch.nn.Module):
    def forward(self, x):
        return torch.exp(x)


def ulps(result: torch.Tensor, exact: torch.Tensor) -> torch.Tensor:
    """|result - exact| in ULP of the exact value rounded to float32."""
    rounded = exact.float()
    spacing = (torch.nextafter(rounded, torch.tensor(float("inf"))) - rounded).double()
    return (result.double() - exact).abs() / spacing


def main() -> int:
    torch.manual_seed(0)
    x = torch.cat([torch.randn(4096), torch.arange(0.5, 16.0, 0.0625)]).float()
    program = torch.export.export(Exp().eval(), (x,))
    pte = to_edge_transform_and_lower(program, partitioner=[XnnpackPartitioner()]).to_executorch().buffer
    actual = Runtime.get().load_program(pte).load_method("forward").execute([x])[0]
    exact = torch.exp(x.double())
    eager_ulps, xnn_ulps = ulps(torch.exp(x), exact), ulps(actual, exact)
    worst = int(xnn_ulps.argmax())
    print(f"eager PyTorch: worst {float(eager_ulps.max()):.2f} ULP")
    print(
        f"XNNPACK:       worst {float(xnn_ulps.max()):.2f} ULP at x = {float(x[worst]):.6g} "
        f"(XNNPACK {float(actual[worst]):.8g}, exact {float(exact[worst]):.8g}); "
        f"{int((xnn_ulps > BOUND_ULP).sum())} of {len(x)} values above {BOUND_ULP} ULP"
    )
    if float(xnn_ulps.max()) > BOUND_ULP:
        print(f"DEFECT: XNNPACK's exp is more than {BOUND_ULP} ULP from the correctly rounded result")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
