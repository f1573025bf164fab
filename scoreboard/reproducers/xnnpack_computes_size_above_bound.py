"""XNNPACK delegate (executorch 1.5.1): a program exported with a dynamic dimension bounded above
(torch.export.Dim(max=4)) computes that dimension at 5, and right, instead of refusing it.

Standalone (torch, executorch 1.5.1; no conformance-suite code):

    python xnnpack_computes_size_above_bound.py

What it does: exports an MLP over x[batch, tokens, 16] with batch <= 4 and tokens <= 8, lowers it
with XnnpackPartitioner, and executes it with batch 4 (within the bound) and batch 5, tokens 1 (above
one bound, within ExecuTorch's buffer capacity) with ExecuTorch's Python runtime.

Seen (x86-64, executorch 1.5.1): batch 5 executes and its outputs match eager PyTorch (1.2e-7).
XNNPACK reshapes its runtime for each input, so this is not a defect: it is the evidence for the
class (b) change of C-DYN-2 (a size above a bound is refused, or computed right).

Exit status: 0 when the size above the bound is refused or computed right, 1 for wrong outputs.
"""

from __future__ import annotations

import sys

import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime


class TokenMLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))) + x


def main() -> int:
    torch.manual_seed(0)
    model = TokenMLP().eval()
    dims = ({0: torch.export.Dim("batch", max=4), 1: torch.export.Dim("tokens", max=8)},)
    program = torch.export.export(model, (torch.randn(2, 6, 16),), dynamic_shapes=dims)
    pte = to_edge_transform_and_lower(program, partitioner=[XnnpackPartitioner()]).to_executorch().buffer
    method = Runtime.get().load_program(pte).load_method("forward")
    within = torch.randn(4, 8, 16)
    out = method.execute([within])[0]
    print(f"batch 4 (the bound): max abs error {float((out - model(within)).abs().max()):.3g}")
    above = torch.randn(5, 1, 16)
    try:
        out = method.execute([above])[0]
    except RuntimeError as exc:
        print(f"batch 5 (above the bound): refused: {exc}")
        return 0
    error = float((out - model(above)).abs().max())
    right = error <= 1e-5
    print(
        f"batch 5 (above the bound 4): computed, shape {tuple(out.shape)}, max abs error {error:.3g} "
        f"({'right' if right else 'WRONG'})"
    )
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
