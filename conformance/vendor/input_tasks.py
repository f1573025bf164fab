"""Vendor-process task of RT-8 (``task_registry.INPUTS_FLOW``, judged by ``conformance.checks.runtime``):
a program that shows what a delegate left in the tensors it was handed.

The program is a sample model that also returns its own inputs, unchanged, after its outputs. A graph
input returned as an output is the method's input tensor itself, read once every instruction has run, so
what the program returns in those places is what the delegates left in the inputs: a backend that writes
into an input tensor (as scratch, or by computing in place) changes them, while a correct one leaves them
bit for bit. No operator is involved, so no partitioner can take the echo away. Only inputs that a
delegate of the backend reads directly are judged: the intermediate tensors handed to a delegate are not
observable this way, and the task takes the first delegated sample where a delegate reads a program input.
"""

from __future__ import annotations

from typing import Any

from conformance.fx_names import operator_nodes
from conformance.vendor.bootstrap import descriptor
from conformance.vendor.core_tasks import made_sample, partitioners
from conformance.vendor.envelope import vendor_call
from conformance.vendor.records import pack


def _as_outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def echo_program(sample: Any) -> Any:
    """A module returning ``sample``'s outputs, then its inputs as they were given."""
    import torch

    class EchoInputs(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.sample = sample

        def forward(self, *xs: Any) -> tuple[Any, ...]:
            return (*_as_outputs(self.sample(*xs)), *xs)

    return EchoInputs().eval()


def read_by_delegate(edge_program: Any, backend_id: str) -> list[int]:
    """Positions of the program's user inputs that a delegate of ``backend_id`` reads directly."""
    graph_module = edge_program.graph_module
    user_inputs = list(edge_program.graph_signature.user_inputs)
    placeholders = {n.name: n for n in graph_module.graph.nodes if n.op == "placeholder"}
    positions = {placeholders[name]: i for i, name in enumerate(user_inputs) if name in placeholders}
    read: set[int] = set()
    for node in operator_nodes(graph_module.graph):
        if "executorch_call_delegate" not in str(node.target):
            continue
        if getattr(graph_module, node.args[0].target).backend_id != backend_id:
            continue
        read |= {positions[a] for a in node.args[1:] if a in positions}
    return sorted(read)


def inputs_flow(names: list[str]) -> dict[str, Any]:
    """The echo program (module docstring) of the first sample of ``names`` where a delegate of the backend
    reads a program input: its .pte, inputs and eager outputs (packed), how many outputs are the sample's,
    and which inputs a delegate reads. {"sample": None, "tried": ...} when none has such a delegate."""
    import torch
    from executorch.exir import to_edge_transform_and_lower

    backend_id = descriptor().backend_id
    tried = []
    for name in names:
        sample, inputs = made_sample(name)
        if not all(isinstance(x, torch.Tensor) for x in inputs):
            tried.append(f"{name!r} (an input is not a tensor)")
            continue
        module = echo_program(sample)
        exported = vendor_call(
            f"torch.export.export of sample model {name!r} returning its inputs",
            torch.export.export,
            module,
            tuple(inputs),
        )
        edge = vendor_call(
            f"lowering sample model {name!r} returning its inputs with make_partitioners()",
            to_edge_transform_and_lower,
            exported,
            partitioner=partitioners("default"),
        )
        read = read_by_delegate(edge.exported_program(), backend_id)
        if not read:
            tried.append(f"{name!r} (no delegate of {backend_id} reads a program input)")
            continue
        with torch.no_grad():
            expected = [o.clone() for o in _as_outputs(module(*inputs))]
        program = vendor_call(
            f"to_executorch() of sample model {name!r} returning its inputs", edge.to_executorch
        )
        return {
            "sample": name,
            "pte": bytes(program.buffer),
            "inputs": pack(list(inputs)),
            "expected": pack(expected),
            "sample_outputs": len(expected) - len(inputs),
            "read": read,
        }
    return {"sample": None, "tried": tried}
