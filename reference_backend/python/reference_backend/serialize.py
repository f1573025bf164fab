"""Serializes a delegated subgraph into the payload of blob format 1.x.

Payload layout (docs/blob-header.md, "Payload"), little-endian::

    u32 num_values, num_inputs, num_outputs, num_ops; u64 constant_bytes
    value records (48 bytes): u8 kind, u8 dtype, u8 rank, u8 0,
                              u32 dims[8], u64 constant_offset, u32 0
    u32 input value ids; u32 output value ids
    op records: u8 opcode, u8 num_inputs, u16 0, u32 output, u32 inputs[3]
                (+ f32 alpha from format 1.1)
    zero padding to a multiple of 16, then the constant section.

``struct`` writes these fixed records; the format is small and fixed, and the
C++ reader must stay free of schema libraries for embedded targets.
"""

from __future__ import annotations

import struct

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from reference_backend.ops import SUPPORTED_OPS, MAX_RANK, op_name, static_float32_shape, tensor_inputs

KIND_ACTIVATION = 0
KIND_CONSTANT = 1
DTYPE_FLOAT32 = 6

_PAYLOAD_HEADER = struct.Struct("<IIIIQ")
_VALUE = struct.Struct("<BBBB8IQI")
_OP_V0 = struct.Struct("<BBHI3I")
_OP_V1 = struct.Struct("<BBHI3If")
_CONSTANT_INPUT_KINDS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


class SerializationError(ValueError):
    """The subgraph cannot be written in the requested blob format."""


def _constant_tensors(program: ExportedProgram) -> dict[str, torch.Tensor]:
    """Placeholder name -> tensor, for the placeholders the delegate owns."""
    found = {}
    for spec in program.graph_signature.input_specs:
        if spec.kind in _CONSTANT_INPUT_KINDS:
            tensor = program.state_dict.get(spec.target)
            if tensor is None:
                tensor = program.constants.get(spec.target)
            if tensor is None:
                raise SerializationError(f"no data for constant input {spec.target}")
            found[spec.arg.name] = tensor
    return found


def serialize_program(program: ExportedProgram, minor: int) -> bytes:
    """The payload for the subgraph ``program`` in blob format 1.``minor``."""
    constants = _constant_tensors(program)
    values: list[tuple[int, tuple[int, ...], int]] = []  # kind, shape, offset
    ids: dict[str, int] = {}
    constant_data = bytearray()
    inputs: list[int] = []
    ops: list[bytes] = []
    outputs: list[int] = []

    def add_value(node: torch.fx.Node, kind: int, offset: int = 0) -> int:
        shape = static_float32_shape(node.meta.get("val"))
        if shape is None:
            raise SerializationError(f"{node.name} is not a float32 tensor with static shape")
        ids[node.name] = len(values)
        values.append((kind, shape, offset))
        return ids[node.name]

    for node in program.graph.nodes:
        if node.op == "placeholder":
            if node.name in constants:
                data = constants[node.name].detach().to(torch.float32).contiguous()
                offset = len(constant_data)
                constant_data += data.numpy().tobytes()
                constant_data += b"\0" * (-len(constant_data) % 16)
                add_value(node, KIND_CONSTANT, offset)
            else:
                inputs.append(add_value(node, KIND_ACTIVATION))
        elif node.op == "call_function":
            ops.append(_op_record(node, ids, add_value(node, KIND_ACTIVATION), minor))
        elif node.op == "output":
            for out in node.args[0]:
                if not isinstance(out, torch.fx.Node) or out.name not in ids:
                    raise SerializationError(f"output {out!r} is not a tensor of the subgraph")
                if values[ids[out.name]][0] == KIND_CONSTANT:
                    raise SerializationError(f"output {out.name} is a constant")
                outputs.append(ids[out.name])

    parts = [_PAYLOAD_HEADER.pack(len(values), len(inputs), len(outputs), len(ops), len(constant_data))]
    for kind, shape, offset in values:
        dims = list(shape) + [0] * (MAX_RANK - len(shape))
        parts.append(_VALUE.pack(kind, DTYPE_FLOAT32, len(shape), 0, *dims, offset, 0))
    parts.append(struct.pack(f"<{len(inputs)}I", *inputs))
    parts.append(struct.pack(f"<{len(outputs)}I", *outputs))
    parts.extend(ops)
    body = b"".join(parts)
    return body + b"\0" * (-len(body) % 16) + bytes(constant_data)


def _op_record(node: torch.fx.Node, ids: dict[str, int], out: int, minor: int) -> bytes:
    name = op_name(node.target)
    spec = SUPPORTED_OPS.get(name)
    if spec is None:
        raise SerializationError(f"operator {name or node.target} is not supported by the runtime")
    operands = tensor_inputs(node)
    try:
        operand_ids = [ids[a.name] for a in operands]
    except (KeyError, AttributeError):
        raise SerializationError(f"{node.name}: operands {operands} are not tensors of the subgraph") from None
    alpha = float(node.kwargs.get("alpha", 1.0)) if spec.has_alpha else 1.0
    padded = operand_ids + [0] * (3 - len(operand_ids))
    if minor == 0:
        if alpha != 1.0:
            raise SerializationError(
                f"{node.name}: alpha={alpha} needs blob format 1.1; format 1.0 cannot store it"
            )
        return _OP_V0.pack(spec.opcode, len(operand_ids), 0, out, *padded)
    return _OP_V1.pack(spec.opcode, len(operand_ids), 0, out, *padded, alpha)
