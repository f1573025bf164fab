"""SimGraphBackend: a backend with no C++ runtime, whose delegates run in a Python simulator.

Its preprocess writes the contract header and, as the payload, the delegated subgraph itself: the ATen
operator of each node, its arguments (earlier nodes by index, constants as they are) and the subgraph's
parameters, saved with ``torch.save``. Its simulator (``simulate``) reads that payload back and computes each
node with ATen, the way a vendor's instruction-set simulator computes its own instructions.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import torch
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult

from backend_kit.aot import BlobWriter, schema_name
from backend_kit.header import HeaderError, decode, payload_of
from backend_kit.partitioner import OperatorPartitioner
from backend_kit.simulator import IncompatibleBlob, SimulatorContext, simulated_delegate

BACKEND_ID = "SimGraphBackend"
VERSION = "0.3.0"
BLOB_FORMAT = (1, 0)
#: The operators the backend takes (schema names); every float32 node of these is delegated.
OPS = (
    "aten::add.Tensor",
    "aten::sub.Tensor",
    "aten::mul.Tensor",
    "aten::relu",
    "aten::neg",
    "aten::abs",
    "aten::addmm",
    "aten::mm",
    "aten::permute_copy",
    "aten::tanh",
)
WRITER = BlobWriter(BACKEND_ID, blob_format=BLOB_FORMAT, version=VERSION)


class SimGraphPartitioner(OperatorPartitioner):
    """Claims each connected group of float32 nodes of ``OPS`` as one delegate."""

    def __init__(self) -> None:
        super().__init__(BACKEND_ID, OPS)


def _ref(value: Any, index: dict[str, int]) -> Any:
    if isinstance(value, torch.fx.Node):
        return ("node", index[value.name])
    if isinstance(value, (list, tuple)):
        return [_ref(v, index) for v in value]
    return value


def graph_payload(edge_program) -> bytes:
    """The payload: {"inputs": count, "values": [...], "nodes": [(op, args)], "outputs": [indices]}."""
    signature = edge_program.graph_signature
    params = {**signature.inputs_to_parameters, **signature.inputs_to_buffers}
    constants = {**getattr(signature, "inputs_to_lifted_tensor_constants", {})}
    index: dict[str, int] = {}
    values: list[Any] = []  # one entry per value: ("input", i) or ("tensor", t)
    user_inputs = 0
    nodes: list[tuple[str, list[Any]]] = []
    outputs: list[int] = []
    for node in edge_program.graph.nodes:
        if node.op == "placeholder":
            index[node.name] = len(values)
            if node.name in params:
                values.append(("tensor", edge_program.state_dict[params[node.name]].detach().clone()))
            elif node.name in constants:
                values.append(("tensor", edge_program.constants[constants[node.name]].detach().clone()))
            else:
                values.append(("input", user_inputs))
                user_inputs += 1
        elif node.op == "call_function":
            index[node.name] = len(values)
            values.append(("node", len(nodes)))
            nodes.append((schema_name(node.target), _ref(list(node.args), index)))
        elif node.op == "output":
            outputs = [index[n.name] for n in node.args[0]]
    buffer = io.BytesIO()
    torch.save({"inputs": user_inputs, "values": values, "nodes": nodes, "outputs": outputs}, buffer)
    return buffer.getvalue()


class SimGraphBackend(BackendDetails):
    @staticmethod
    def preprocess(edge_program, compile_specs) -> PreprocessResult:
        return PreprocessResult(processed_bytes=WRITER.blob(graph_payload(edge_program)))


def _aten(name: str) -> Any:
    base, _, overload = name.removeprefix("aten::").partition(".")
    packet = getattr(torch.ops.aten, base)
    return getattr(packet, overload or "default")


def run_graph(graph: dict, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """The outputs of the payload's graph for ``inputs``."""
    results: list[Any] = [None] * len(graph["nodes"])

    def value(ref: Any) -> Any:
        if isinstance(ref, tuple) and len(ref) == 2 and ref[0] == "node":
            kind, where = graph["values"][ref[1]]
            return inputs[where] if kind == "input" else results[where] if kind == "node" else where
        if isinstance(ref, list):
            return [value(r) for r in ref]
        return ref

    for position, (op, args) in enumerate(graph["nodes"]):
        results[position] = _aten(op)(*value(args))
    return [value(("node", i)) for i in graph["outputs"]]


def read_payload(payload: bytes) -> dict:
    """The graph of a blob; IncompatibleBlob for another backend's or another major format's."""
    try:
        header = decode(payload)
    except HeaderError as exc:
        raise IncompatibleBlob(
            f"no valid contract header for the {BACKEND_ID} simulator {VERSION}: {exc}"
        ) from None
    if (
        header.backend_id != BACKEND_ID
        or header.blob_format[0] != BLOB_FORMAT[0]
        or header.blob_format[1] > BLOB_FORMAT[1]
    ):
        raise IncompatibleBlob(
            f"blob of {header.backend_id!r} format {header.blob_format[0]}.{header.blob_format[1]}; "
            f"this simulator (version {VERSION}) reads {BACKEND_ID!r} format {BLOB_FORMAT[0]}.0 to "
            f"{BLOB_FORMAT[0]}.{BLOB_FORMAT[1]}"
        )
    return torch.load(io.BytesIO(bytes(payload_of(payload))), weights_only=True)


def simulate(payload: bytes, context: SimulatorContext):
    """The simulator: a delegate computing the payload's graph with ATen."""
    graph = read_payload(payload)
    return simulated_delegate(graph["inputs"], lambda inputs, outputs: run_graph(graph, inputs))
