"""Arm TOSA delegate, integer profile, and Ethos-U delegate (executorch 1.5.1): TOSAQuantizer and
EthosUQuantizer cannot prepare a graph whose token sequence length is dynamic when positions are computed from
it (``input_pos + arange(tokens.shape[1])``, as a decoder's rotary embedding does): ``prepare_pt2e`` raises
from Arm's own ``ConvertInt64ConstOpsToInt32Pass``, which calls ``aten::arange`` with the symbolic size node as
its end ("Cannot cast sym_size_int to number").

Standalone (torch and executorch 1.5.1 with Arm's dependencies; no conformance-suite code; make the environment
with scripts/arm_env.sh):

    .venv-arm/bin/python arm_quantizer_dynamic_arange.py    # TOSA-1.0+INT, ethos-u55-128 and ethos-u85-256
    .venv-arm/bin/python arm_quantizer_dynamic_arange.py ethos-u85-256   # one of them

What it does: a small module (embedding, linear, then scaled by ``input_pos + arange(sequence length)``) is
exported twice, with the sequence length static and with it dynamic (1 to 8, ``torch.export.Dim.AUTO``), and
each graph is prepared with ``TOSAQuantizer(TosaCompileSpec("TOSA-1.0+INT"))`` and with
``EthosUQuantizer(EthosUCompileSpec(target))`` for ethos-u55-128 and ethos-u85-256, each with Arm's symmetric
int8 configuration.

Seen (x86-64 Linux), with each quantizer: the static graph is prepared; the dynamic one raises "An error
occurred when running the 'ConvertInt64ConstOpsToInt32Pass' pass", caused by "aten::arange() Expected a value
of type 'number' for argument 'end' but instead found type 'Node'". PT2E quantizes a decoder from one export
whose sequence length is dynamic, so that prefill and decode share one set of observers; the TOSA and Ethos-U
flows then lower each method from a static export, so nothing but the quantizer's preparation stands in the
way. A quantizer should prepare the
graph (leaving a symbolic arange unfolded) or refuse dynamic shapes with a message saying so.

Exit status: 1 while, for a quantizer, the dynamic graph cannot be prepared and the static one can, 0 otherwise.
"""

from __future__ import annotations

import sys

import torch
from executorch.backends.arm import EthosUCompileSpec, EthosUQuantizer
from executorch.backends.arm.quantizer import TOSAQuantizer, get_symmetric_quantization_config
from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Positions(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(16, 8)
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, tokens: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        positions = input_pos + torch.arange(tokens.shape[1])
        return self.linear(self.embedding(tokens)) * positions[None, :, None]


TARGETS = ("TOSA-1.0+INT", "ethos-u55-128", "ethos-u85-256")


def make_quantizer(target: str):
    """TOSAQuantizer for a TOSA profile, EthosUQuantizer for an Ethos-U target; Arm's symmetric int8 config."""
    if target.startswith("TOSA"):
        quantizer = TOSAQuantizer(TosaCompileSpec(target))
    else:
        quantizer = EthosUQuantizer(EthosUCompileSpec(target))
    quantizer.set_global(get_symmetric_quantization_config())
    return quantizer


def prepare(target: str, dynamic: bool) -> str:
    """What prepare_pt2e with ``target``'s quantizer makes of the module exported with a static or dynamic
    length."""
    torch.manual_seed(0)
    inputs = (torch.randint(0, 16, (1, 4)), torch.tensor([0]))
    shapes = ({1: torch.export.Dim.AUTO(min=1, max=8)}, None) if dynamic else None
    graph = torch.export.export(Positions().eval(), inputs, dynamic_shapes=shapes).module(check_guards=False)
    try:
        prepared = prepare_pt2e(graph, make_quantizer(target))
        prepared(*inputs)
    except Exception as exc:  # noqa: BLE001  (what is shown is the quantizer's failure)
        causes = []
        while exc is not None:
            causes.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
            exc = exc.__cause__ or exc.__context__
        return "raised " + " <- ".join(causes[:2])
    return "prepared and calibrated"


def main() -> int:
    failing = False
    for target in sys.argv[1:] or TARGETS:
        found = {}
        for dynamic in (False, True):
            found[dynamic] = prepare(target, dynamic)
            print(f"{target}, sequence length {'dynamic' if dynamic else 'static'}: {found[dynamic]}")
        failing |= found[True].startswith("raised") and not found[False].startswith("raised")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
