"""Serializes a delegated subgraph into the payload of blob format 1.x.

Payload layout (docs/blob-header.md, "Payload"; docs/named-data.md for 1.2),
little-endian::

    u32 num_values, num_inputs, num_outputs, num_ops; u64 constant_bytes
    u32 num_named, u32 named_table_bytes                       (from format 1.2)
    value records (48 bytes): u8 kind, u8 dtype, u8 rank, u8 0,
                              u32 dims[8], u64 constant_offset, u32 0
        kind 0 activation; 1 constant: constant_offset is a byte offset into
        the constant section; 2 named (1.2): constant_offset is an index into
        the named-data table
    u32 input value ids; u32 output value ids
    op records: u8 opcode, u8 num_inputs, u16 0, u32 output, u32 inputs[3]
                (+ f32 alpha from format 1.1)
    named-data table (1.2): per entry u64 byte_size, u16 key_length,
        u16 file_length, u32 0, key (UTF-8), file name (UTF-8; empty: the
        data is inside the .pte), zero padding to a multiple of 8
    zero padding to a multiple of 16, then the constant section.

``struct`` writes these fixed records; the format is small and fixed, and the
C++ reader must stay free of schema libraries for embedded targets.
"""

from __future__ import annotations

import dataclasses
import hashlib
import struct

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from reference_backend.compile_specs import CompileOptions
from reference_backend.ops import SUPPORTED_OPS, MAX_RANK, op_name, static_float32_shape, tensor_inputs
from reference_backend.version import NAMED_DATA_MINOR

KIND_ACTIVATION = 0
KIND_CONSTANT = 1
KIND_NAMED = 2
DTYPE_FLOAT32 = 6
#: Longest key and file name the table stores (the runtime's limit too).
MAX_NAME_BYTES = 255
#: The label part of a key is cut to this many characters.
_MAX_LABEL = 96

_PAYLOAD_HEADER = struct.Struct("<IIIIQ")
_NAMED_HEADER = struct.Struct("<II")
_VALUE = struct.Struct("<BBBB8IQI")
_OP_V0 = struct.Struct("<BBHI3I")
_OP_V1 = struct.Struct("<BBHI3If")
_NAMED_ENTRY = struct.Struct("<QHHI")
_CONSTANT_INPUT_KINDS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


class SerializationError(ValueError):
    """The subgraph cannot be written in the requested blob format."""


@dataclasses.dataclass(frozen=True)
class NamedEntry:
    """One row of the payload's named-data table."""

    key: str
    #: The external file that holds the data ("weights.ptd"); None: the .pte.
    file: str | None
    nbytes: int


@dataclasses.dataclass(frozen=True)
class Payload:
    """A serialized payload and the named data it refers to: (entry, float32
    tensor, its bytes) for each row of the table."""

    data: bytes
    named: tuple[tuple[NamedEntry, torch.Tensor, bytes], ...] = ()


def named_data_key(label: str, data: bytes) -> str:
    """The key of a constant: its name in the model plus a digest of its bytes,
    so that equal weights get equal keys in every export (one copy in a shared
    .ptd) and different data never meets a stale key."""
    # Printable ASCII only: the runtime refuses other bytes in a key (they end up in log lines).
    label = "".join(c if " " <= c <= "~" else "_" for c in label[:_MAX_LABEL])
    return f"{label}@{hashlib.sha256(data).hexdigest()[:16]}"


def _constant_tensors(program: ExportedProgram) -> dict[str, tuple[str, torch.Tensor]]:
    """Placeholder name -> (its name in the model, tensor), for the placeholders the delegate owns."""
    found = {}
    for spec in program.graph_signature.input_specs:
        if spec.kind in _CONSTANT_INPUT_KINDS:
            tensor = program.state_dict.get(spec.target)
            if tensor is None:
                tensor = program.constants.get(spec.target)
            if tensor is None:
                raise SerializationError(f"no data for constant input {spec.target}")
            found[spec.arg.name] = (spec.target, tensor)
    return found


def serialize_program(program: ExportedProgram, minor: int) -> bytes:
    """The payload for the subgraph ``program`` in blob format 1.``minor``,
    every constant inside the payload."""
    return serialize_payload(program, CompileOptions(blob_format=(1, minor))).data


def serialize_payload(program: ExportedProgram, options: CompileOptions) -> Payload:
    """The payload for the subgraph ``program`` as ``options`` ask: constants of
    at least ``options.named_data_threshold`` bytes go to named data."""
    minor = options.blob_format[1]
    threshold = options.named_data_threshold
    if threshold is not None and minor < NAMED_DATA_MINOR:
        raise SerializationError(f"named data needs blob format 1.{NAMED_DATA_MINOR}; format 1.{minor} cannot store it")
    file_name = options.named_data_file_name
    constants = _constant_tensors(program)
    values: list[tuple[int, tuple[int, ...], int]] = []  # kind, shape, offset or table index
    ids: dict[str, int] = {}
    constant_data = bytearray()
    named: dict[str, tuple[int, NamedEntry, torch.Tensor, bytes]] = {}  # key -> (table index, entry, data)
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
                label, tensor = constants[node.name]
                data = tensor.detach().to(torch.float32).contiguous()
                raw = data.numpy().tobytes()
                if threshold is not None and len(raw) >= threshold:
                    key = named_data_key(label, raw)
                    if key not in named:
                        named[key] = (len(named), NamedEntry(key, file_name, len(raw)), data, raw)
                    add_value(node, KIND_NAMED, named[key][0])
                else:
                    offset = len(constant_data)
                    constant_data += raw
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
                if values[ids[out.name]][0] != KIND_ACTIVATION:
                    raise SerializationError(f"output {out.name} is a constant")
                outputs.append(ids[out.name])

    table = b"".join(_named_entry(entry) for _, entry, _, _ in named.values())
    parts = [_PAYLOAD_HEADER.pack(len(values), len(inputs), len(outputs), len(ops), len(constant_data))]
    if minor >= NAMED_DATA_MINOR:
        parts.append(_NAMED_HEADER.pack(len(named), len(table)))
    for kind, shape, offset in values:
        dims = list(shape) + [0] * (MAX_RANK - len(shape))
        parts.append(_VALUE.pack(kind, DTYPE_FLOAT32, len(shape), 0, *dims, offset, 0))
    parts.append(struct.pack(f"<{len(inputs)}I", *inputs))
    parts.append(struct.pack(f"<{len(outputs)}I", *outputs))
    parts.extend(ops)
    parts.append(table)
    body = b"".join(parts)
    payload = body + b"\0" * (-len(body) % 16) + bytes(constant_data)
    return Payload(payload, tuple((entry, data, raw) for _, entry, data, raw in named.values()))


def _named_entry(entry: NamedEntry) -> bytes:
    key = entry.key.encode()
    file = (entry.file or "").encode()
    if not key or len(key) > MAX_NAME_BYTES or len(file) > MAX_NAME_BYTES:
        raise SerializationError(f"named data key {entry.key!r} or file {entry.file!r} is empty or too long")
    record = _NAMED_ENTRY.pack(entry.nbytes, len(key), len(file), 0) + key + file
    return record + b"\0" * (-len(record) % 8)


def named_entries(payload: bytes, minor: int) -> list[NamedEntry]:
    """The named-data table of a payload of blob format 1.``minor`` (empty before 1.2).

    Raises SerializationError if the payload is too short for what its counts say.
    """
    if minor < NAMED_DATA_MINOR:
        return []
    try:
        num_values, num_inputs, num_outputs, num_ops, _ = _PAYLOAD_HEADER.unpack_from(payload, 0)
        num_named, table_bytes = _NAMED_HEADER.unpack_from(payload, _PAYLOAD_HEADER.size)
        pos = (_PAYLOAD_HEADER.size + _NAMED_HEADER.size + num_values * _VALUE.size
               + 4 * (num_inputs + num_outputs) + num_ops * _OP_V1.size)
        end = pos + table_bytes
        if end > len(payload):
            raise SerializationError(f"named-data table [{pos}, {end}) lies outside the {len(payload)}-byte payload")
        entries = []
        for _ in range(num_named):
            nbytes, key_length, file_length, _ = _NAMED_ENTRY.unpack_from(payload, pos)
            at = pos + _NAMED_ENTRY.size
            if at + key_length + file_length > end:
                raise SerializationError(f"named-data entry at payload offset {pos} runs past the table")
            key = bytes(payload[at : at + key_length]).decode("utf-8", "replace")
            file = bytes(payload[at + key_length : at + key_length + file_length]).decode("utf-8", "replace")
            entries.append(NamedEntry(key, file or None, nbytes))
            pos = at + key_length + file_length
            pos += -pos % 8
    except struct.error as exc:
        raise SerializationError(f"truncated payload: {exc}") from None
    return entries


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
