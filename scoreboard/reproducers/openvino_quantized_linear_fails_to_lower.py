"""OpenVINO delegate (executorch 1.5.1, openvino 2025.4.1, nncf 3.1.0): a model quantized with
ExecuTorch's own OpenVINOQuantizer (PT2E) fails to lower: the linear layer (aten.addmm after
dequantize) is claimed and then fails to convert.

Standalone (torch, torchao, executorch 1.5.1, openvino, nncf; no conformance-suite code):

    python openvino_quantized_linear_fails_to_lower.py

What it does: conv2d + relu + add + linear, exported, prepare_pt2e with OpenVINOQuantizer(),
calibrated on 8 inputs, convert_pt2e, exported again and lowered with OpenvinoPartitioner.

Seen: OpConversionFailure "Model wasn't fully converted ... aten.addmm.default". The float model
lowers and runs (the scoreboard's RT-3 passes with it).

Exit status: 1 while the quantized model fails to lower, 0 when it lowers.
"""

from __future__ import annotations

import sys

import torch
from executorch.backends.openvino.partitioner import OpenvinoPartitioner
from executorch.backends.openvino.quantizer import OpenVINOQuantizer
from executorch.exir import to_edge_transform_and_lower
from executorch.exir.backend.compile_spec_schema import CompileSpec
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


class ConvNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.fc((y + y).flatten(1))


def main() -> int:
    torch.manual_seed(0)
    model = ConvNet().eval()
    example = (torch.randn(2, 3, 8, 8),)
    prepared = prepare_pt2e(torch.export.export(model, example).module(), OpenVINOQuantizer())
    for _ in range(8):
        prepared(torch.randn(2, 3, 8, 8))
    converted = convert_pt2e(prepared)
    program = torch.export.export(converted, example)
    try:
        to_edge_transform_and_lower(
            program, partitioner=[OpenvinoPartitioner([CompileSpec("device", b"CPU")])]
        )
    except Exception as exc:  # noqa: BLE001  the lowering's failure is the finding
        print(f"DEFECT: lowering the quantized model failed: {type(exc).__name__}: {str(exc)[:400]}")
        return 1
    print("the quantized model lowers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
