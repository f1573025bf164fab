"""OpenVINO delegate (executorch 1.5.1, openvino 2025.4.1): a program with a 0-dimensional (scalar)
tensor input fails to load, and max_pool2d of a channels-last input gives wrong values.

Standalone (torch, executorch 1.5.1, openvino, nncf; no conformance-suite code):

    python openvino_rank0_and_channels_last.py

What it does: lowers with OpenvinoPartitioner (which claims both programs) and runs with ExecuTorch's
Python runtime: relu of a rank-0 tensor, and max_pool2d(kernel 2) of a [2, 3, 8, 8] input in
channels-last dim order; each result is compared with eager PyTorch.

Exit status: 1 while either program fails or differs, 0 when both match.
"""

from __future__ import annotations

import sys

import torch
from executorch.backends.openvino.partitioner import OpenvinoPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.runtime import Runtime


class Op(torch.nn.Module):
    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def run(fn, x: torch.Tensor) -> tuple[str, bool]:
    program = torch.export.export(Op(fn).eval(), (x,))
    edge = to_edge_transform_and_lower(
        program, partitioner=[OpenvinoPartitioner([CompileSpec("device", b"CPU")])]
    )
    pte = edge.to_executorch().buffer
    expected = fn(x)
    try:
        actual = Runtime.get().load_program(pte).load_method("forward").execute([x])[0]
    except RuntimeError as exc:
        return f"failed: {exc}", False
    if actual.shape != expected.shape:
        return f"shape {tuple(actual.shape)}, eager {tuple(expected.shape)}", False
    error = float((actual.double() - expected.double()).abs().max())
    return f"max abs error {error:.3g}", error <= 1e-2 and bool(torch.isfinite(actual).all())


def main() -> int:
    torch.manual_seed(0)
    cases = {
        "relu of a rank-0 tensor": (torch.relu, torch.tensor(-1.5)),
        "max_pool2d of a channels-last input": (
            lambda x: torch.nn.functional.max_pool2d(x, 2),
            torch.randn(2, 3, 8, 8).contiguous(memory_format=torch.channels_last),
        ),
    }
    failing = 0
    for label, (fn, x) in cases.items():
        what, ok = run(fn, x)
        print(f"{label}: {what}{'' if ok else '  <- DEFECT'}")
        failing += not ok
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
