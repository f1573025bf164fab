"""OpenVINO delegate (executorch 1.5.1, openvino 2025.4.1): operators OpenvinoPartitioner claims and
then gets wrong: a 0-dimensional (scalar) input or output, or a tensor with no elements, fails at
execute (error 0x1), pooling and
convolution of a channels-last input give wrong values, upsample_bilinear2d fails to convert, and
index_put with accumulate=True overwrites instead of adding.

Standalone (torch, executorch 1.5.1, openvino, nncf; no conformance-suite code):

    python openvino_rank0_and_channels_last.py

What it does: lowers each one-operator program with OpenvinoPartitioner (which claims all of them)
and runs it with ExecuTorch's Python runtime, comparing with eager PyTorch (within bf16's precision,
which OpenVINO's CPU plugin computes in): relu of a rank-0 tensor, sum of a rank-1 tensor to a
rank-0 one, permute and reshape of a tensor with no elements (shape 0x3), max_pool2d and conv2d of
channels-last inputs, upsample_bilinear2d (scale 2), and
index_put with repeated indices and accumulate=True.

Seen: the rank-0 programs fail with 0x1 (ExecuTorch's OpenvinoBackend::execute cannot make an
OpenVINO tensor of rank 0), so do the programs of an empty tensor, the channels-last ones are computed as if the data were contiguous
(ExecuTorch's OpenVINO runtime ignores the dim order), upsample_bilinear2d fails to lower (the
partitioner asks ExecuTorch not to decompose it, then does not claim it: "was not decomposed or
delegated"), and index_put gives 2 where eager gives 4.

Exit status: 1 while any program fails or differs, 0 when all match.
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
    try:
        edge = to_edge_transform_and_lower(
            program, partitioner=[OpenvinoPartitioner([CompileSpec("device", b"CPU")])]
        )
    except RuntimeError as exc:  # the lowering's failure is the finding
        return f"lowering failed: {str(exc).splitlines()[0][:200]}", False
    pte = edge.to_executorch().buffer
    expected = fn(x)
    try:
        actual = Runtime.get().load_program(pte).load_method("forward").execute([x])[0]
    except RuntimeError as exc:
        return f"failed: {exc}", False
    if actual.shape != expected.shape:
        return f"shape {tuple(actual.shape)}, eager {tuple(expected.shape)}", False
    error = float((actual.double() - expected.double()).abs().max())
    return f"max abs error {error:.3g}", error <= 2e-2 * max(1.0, float(expected.abs().max()))


def main() -> int:
    torch.manual_seed(0)
    cases = {
        "relu of a rank-0 tensor": (torch.relu, torch.tensor(-1.5)),
        "sum of a rank-1 tensor (a rank-0 result)": (lambda x: x.sum(dim=0), torch.randn(33)),
        "permute of a tensor with no elements": (lambda x: x.permute(1, 0), torch.zeros(0, 3)),
        "reshape of a tensor with no elements": (lambda x: x.reshape(3, 0), torch.zeros(0, 3)),
        "max_pool2d of a channels-last input": (
            lambda x: torch.nn.functional.max_pool2d(x, 2),
            torch.randn(2, 3, 8, 8).contiguous(memory_format=torch.channels_last),
        ),
        "conv2d of a channels-last input": (
            lambda x: torch.nn.functional.conv2d(x, torch.ones(4, 3, 3, 3) / 9),
            torch.randn(2, 3, 8, 8).contiguous(memory_format=torch.channels_last),
        ),
        "upsample_bilinear2d, scale 2": (
            lambda x: torch.nn.functional.interpolate(x, scale_factor=2.0, mode="bilinear"),
            torch.randn(1, 3, 4, 5),
        ),
        "index_put, repeated index, accumulate": (
            lambda x: x.index_put((torch.tensor([0, 0, 2]),), torch.tensor([2.0, 2.0, 1.0]), accumulate=True),
            torch.zeros(4),
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
