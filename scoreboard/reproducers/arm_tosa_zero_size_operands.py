"""Arm TOSA delegate (executorch 1.5.1, tosa-tools 2026.5.0): TOSAPartitioner claims operators whose operands
have a zero-size dimension, and the TOSA graph it writes for them is one the TOSA reference model refuses.

Standalone (torch, executorch 1.5.1 and tosa-tools 2026.5.0; no conformance-suite code; make the environment
with scripts/arm_env.sh, tosa-tools pins numpy<2.2):

    .venv-arm/bin/python arm_tosa_zero_size_operands.py

What it does: lowers ``x + y`` for operands of shapes [0], [2, 0, 3] and ([3, 0], [1]) with the TOSA
floating-point partitioner (``TOSA-1.0+FP``), takes each delegate's payload (a TOSA flatbuffer) from the
lowered program, and runs it in the TOSA reference model; for comparison, the same for shape [4].

Seen (x86-64 Linux): every zero-size case is delegated, and the reference model refuses its graph
(it logs "An error occurred while initializing the TOSA graph" and raises ValueError: Invalid TOSA graph); the [4] case runs and
matches eager PyTorch exactly. A partitioner should leave what its target cannot run on ExecuTorch's CPU
kernels (which compute the empty result).

Exit status: 1 while a zero-size case is delegated and its graph refused, 0 otherwise.
"""

from __future__ import annotations

import sys

import numpy as np
import torch
import tosa_reference_model as reference
from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
from executorch.backends.arm.tosa.partitioner import TOSAPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.exir.lowered_backend_module import LoweredBackendModule


class Add(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


def payloads(x: torch.Tensor, y: torch.Tensor) -> list[bytes]:
    lowered = to_edge_transform_and_lower(
        torch.export.export(Add(), (x, y)), partitioner=[TOSAPartitioner(TosaCompileSpec("TOSA-1.0+FP"))]
    )
    module = lowered.exported_program().graph_module
    return [m.processed_bytes for m in module.children() if isinstance(m, LoweredBackendModule)]


def main() -> int:
    refused = 0
    for shapes in (([4], [4]), ([0], [0]), ([2, 0, 3], [2, 0, 3]), ([3, 0], [1])):
        x, y = (torch.randn(s) for s in shapes)
        found = payloads(x, y)
        if not found:
            print(f"{shapes}: left on ExecuTorch's CPU kernels")
            continue
        try:
            outputs, status = reference.run(found[0], [x.numpy(), y.numpy()], verbosity="NONE")
        except ValueError as exc:  # what run() raises for a graph it cannot initialize
            outputs, status = None, f"ValueError: {exc}"
        if status != reference.GraphStatus.TOSA_VALID:
            refused += any(0 in s for s in shapes)
            print(f"{shapes}: delegated; the reference model refuses the graph ({status})")
            continue
        error = float(np.abs(np.asarray(outputs[0]) - (x + y).numpy()).max()) if (x + y).numel() else 0.0
        print(f"{shapes}: delegated; runs, max abs difference from eager {error}")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
