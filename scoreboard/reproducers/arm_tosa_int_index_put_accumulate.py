"""Arm TOSA delegate, integer profile (executorch 1.5.1, tosa-tools 2026.5.0): ``index_put`` with
``accumulate=True`` and a repeated index, quantized with TOSAQuantizer, is delegated, and the TOSA graph written
for it is one whose result the TOSA reference model reports UNPREDICTABLE.

Standalone (torch, executorch 1.5.1 and tosa-tools 2026.5.0; no conformance-suite code; make the environment
with scripts/arm_env.sh):

    .venv-arm/bin/python arm_tosa_int_index_put_accumulate.py

What it does: ``x.index_put((idx,), v, accumulate=True)`` for x float32[5], idx = [0, 3, 0] and v float32[3],
quantized with ``TOSAQuantizer(TosaCompileSpec("TOSA-1.0+INT"))`` and Arm's symmetric int8 configuration
(calibrated on the inputs), lowered with ``TOSAPartitioner``; the delegate's TOSA graph is run in the reference
model on the quantized inputs. For comparison, the same with idx = [0, 3, 1] (no repeated index).

Seen (x86-64 Linux): both are delegated; with the repeated index the reference model finishes with
GraphStatus.TOSA_UNPREDICTABLE (TOSA's SCATTER leaves a repeated index unpredictable), without it the graph is
valid. Eager PyTorch adds both values at index 0: a partitioner should leave what its lowering cannot compute
(accumulate with possibly repeated indices) on ExecuTorch's CPU kernels.

Exit status: 1 while the repeated-index graph is delegated and unpredictable, 0 otherwise.
"""

from __future__ import annotations

import sys

import numpy as np
import torch
import tosa_reference_model as reference
from executorch.backends.arm.quantizer import TOSAQuantizer, get_symmetric_quantization_config
from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
from executorch.backends.arm.tosa.partitioner import TOSAPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.exir.lowered_backend_module import LoweredBackendModule
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


class Accumulate(torch.nn.Module):
    def __init__(self, index: list[int]) -> None:
        super().__init__()
        self.register_buffer("index", torch.tensor(index))

    def forward(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return x.index_put((self.index,), v, accumulate=True)


def status_of(index: list[int]) -> str:
    spec = TosaCompileSpec("TOSA-1.0+INT")
    x, v = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), torch.tensor([1.0, 2.0, 3.0])
    quantizer = TOSAQuantizer(spec)
    quantizer.set_global(get_symmetric_quantization_config())
    prepared = prepare_pt2e(
        torch.export.export(Accumulate(index), (x, v)).module(check_guards=False), quantizer
    )
    prepared(x, v)
    converted = convert_pt2e(prepared)
    lowered = to_edge_transform_and_lower(
        torch.export.export(converted, (x, v)), partitioner=[TOSAPartitioner(spec)]
    )
    graph_module = lowered.exported_program().graph_module
    delegates = [m for m in graph_module.children() if isinstance(m, LoweredBackendModule)]
    if not delegates:
        return "left on ExecuTorch's CPU kernels"
    # the delegate's inputs: the int8 tensors the quantize nodes before it make
    quantize = [
        n
        for n in graph_module.graph.nodes
        if n.op == "call_function" and "quantize_per_tensor" in str(n.target)
    ]
    inputs = []
    for node, value in zip(quantize[:2], (x, v)):
        scale, zero = float(node.args[1]), int(node.args[2])
        inputs.append(np.clip(np.round(value.numpy() / scale) + zero, -128, 127).astype(np.int8))
    _outputs, status = reference.run(delegates[0].processed_bytes, inputs, verbosity="NONE")
    return f"delegated; the reference model finishes with {status}"


def main() -> int:
    repeated, distinct = status_of([0, 3, 0]), status_of([0, 3, 1])
    print(f"index [0, 3, 0]: {repeated}")
    print(f"index [0, 3, 1]: {distinct}")
    return 1 if "UNPREDICTABLE" in repeated else 0


if __name__ == "__main__":
    sys.exit(main())
