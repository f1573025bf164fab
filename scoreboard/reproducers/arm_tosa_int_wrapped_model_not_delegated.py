"""Arm TOSA delegate, integer profile (executorch 1.5.1): a model quantized with TOSAQuantizer is delegated when
its converted graph module is exported itself, and not at all when that module is called from another module
(a wrapper that keeps a cache, a program with a second method, several quantized parts in one model).

Standalone (torch, executorch 1.5.1 and tosa-tools 2026.5.0; no conformance-suite code; make the environment
with scripts/arm_env.sh):

    .venv-arm/bin/python arm_tosa_int_wrapped_model_not_delegated.py

What it does: quantizes linear + relu with ``TOSAQuantizer(TosaCompileSpec("TOSA-1.0+INT"))`` and Arm's
symmetric int8 configuration (export, prepare_pt2e, one calibration, convert_pt2e), then lowers with
``TOSAPartitioner`` twice: the converted module exported directly, and the same module inside a wrapper whose
forward calls it.

Seen (x86-64 Linux): the direct export is delegated to TOSABackend; the wrapped one is not delegated at all,
and the partitioner reports linear "was not marked as quantized in the Arm backend". The two exported graphs
hold the same nodes; what differs is Arm's marking of the quantized nodes, which TOSAQuantizer keeps in node
metadata (``node.meta["custom"]``) and which torch.export does not carry from a graph module called inside
another module. A partitioner that judges a node by metadata only its own quantizer wrote makes any
composition of a quantized model run on CPU, silently.

Exit status: 1 while the wrapped model is not delegated and the direct one is, 0 otherwise.
"""

from __future__ import annotations

import sys

import torch
from executorch.backends.arm.quantizer import TOSAQuantizer, get_symmetric_quantization_config
from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
from executorch.backends.arm.tosa.partitioner import TOSAPartitioner
from executorch.exir import to_edge_transform_and_lower
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


class Wrapper(torch.nn.Module):
    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)


def delegated(module: torch.nn.Module, example: tuple[torch.Tensor, ...]) -> bool:
    spec = TosaCompileSpec("TOSA-1.0+INT")
    edge = to_edge_transform_and_lower(
        torch.export.export(module, example), partitioner=[TOSAPartitioner(spec)]
    )
    return any("executorch_call_delegate" in str(n.target) for n in edge.exported_program().graph.nodes)


def main() -> int:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()).eval()
    example = (torch.randn(2, 4),)
    quantizer = TOSAQuantizer(TosaCompileSpec("TOSA-1.0+INT"))
    quantizer.set_global(get_symmetric_quantization_config())
    prepared = prepare_pt2e(torch.export.export(model, example).module(check_guards=False), quantizer)
    prepared(*example)
    converted = convert_pt2e(prepared)
    direct, wrapped = delegated(converted, example), delegated(Wrapper(converted), example)
    print(f"converted module exported directly: {'delegated' if direct else 'NOT delegated'}")
    print(f"the same module inside a wrapper:   {'delegated' if wrapped else 'NOT delegated'}")
    return 1 if direct and not wrapped else 0


if __name__ == "__main__":
    sys.exit(main())
