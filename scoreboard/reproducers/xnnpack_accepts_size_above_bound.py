"""XNNPACK delegate (executorch 1.5.1): a program exported with a dynamic dimension bounded above
(torch.export.Dim(max=4)) runs with that dimension at 5 instead of refusing it.

Standalone (torch, executorch 1.5.1; no conformance-suite code):

    python xnnpack_accepts_size_above_bound.py

What it does: exports an MLP over x[batch, tokens, 16] with batch <= 4 and tokens <= 8, lowers it
with XnnpackPartitioner, and executes it with batch 4 (within the bound) and batch 5 (above it) with
ExecuTorch's Python runtime.

Seen (x86-64, executorch 1.5.1): batch 5 executes and returns an output; ExecuTorch planned the
program's memory for the bounds, so a size above them must be refused with an error (as ExecuTorch's
portable kernels refuse it when resizing their outputs). Whether the numbers it returns are right or
not, memory planned for 4 rows held 5.

Exit status: 1 while the size above the bound is accepted, 0 when it is refused.
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
    print(
        f"DEFECT: batch 5 (above the bound 4) executed and returned shape {tuple(out.shape)}, max abs error "
        f"{float((out - model(above)).abs().max()):.3g}"
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
