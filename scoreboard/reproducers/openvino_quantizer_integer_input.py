"""OpenVINO's PT2E quantizer (executorch 1.5.1, nncf 3.1.0): OpenVINOQuantizer observes an int64 input, so a
model that computes positions from an integer input, as every Llama-style decoder does for RoPE and its KV
cache (``positions = input_pos + arange(n)``), cannot be calibrated.

Standalone (torch, executorch 1.5.1 with its openvino extra, nncf; no conformance-suite code):

    python openvino_quantizer_integer_input.py

What it does: exports (the sequence length dynamic, as an LLM's export makes it) a small module whose forward takes token embeddings and an int64 ``input_pos``, picks
rotary-style rows of a table at ``input_pos + arange(n)`` and applies a linear; prepares it with
``prepare_pt2e(OpenVINOQuantizer())``, lists the observers placed on integer tensors, and calibrates once.

Seen (x86-64): HistogramObservers on ``input_pos`` and on the ``arange`` added to it, and calibration raising
``NotImplementedError: "histogram_cpu" not implemented for 'Long'``.

Exit status: 1 while an integer tensor is observed or calibration fails, 0 when it calibrates.
"""

from __future__ import annotations

import sys

import torch
from executorch.backends.openvino.quantizer import OpenVINOQuantizer
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Positions(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("table", torch.randn(16, 8))
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        positions = input_pos + torch.arange(x.shape[1])
        return self.proj(x * self.table[positions])


def main() -> int:
    torch.manual_seed(0)
    inputs = (torch.randn(1, 4, 8), torch.tensor([2]))
    # The sequence length dynamic, as an LLM's export makes it (one graph for prefill and decode).
    dynamic = ({1: torch.export.Dim.AUTO(min=1, max=16)}, None)
    graph = torch.export.export(Positions().eval(), inputs, dynamic_shapes=dynamic).module()
    prepared = prepare_pt2e(graph, OpenVINOQuantizer())
    observed = [
        f"{type(getattr(prepared, node.target)).__name__} on {node.args[0].name} ({node.args[0].meta['val'].dtype})"
        for node in prepared.graph.nodes
        if node.op == "call_module"
        and node.args
        and hasattr(node.args[0], "meta")
        and "val" in node.args[0].meta
        and not node.args[0].meta["val"].dtype.is_floating_point
    ]
    for line in observed:
        print("observer on an integer tensor:", line)
    try:
        prepared(*inputs)
    except Exception as exc:  # noqa: BLE001  what calibration raises is the finding
        print(f"calibration failed: {type(exc).__name__}: {exc}")
        return 1
    print("calibration ran")
    return 1 if observed else 0


if __name__ == "__main__":
    sys.exit(main())
