"""Serializes a delegated subgraph into the payload of blob format 1.x.

Payload layout (docs/blob-header.md, "Payload"; docs/named-data.md for 1.2),
little-endian::

    u32 num_values, num_inputs, num_outputs, num_ops; u64 constant_bytes
    u32 num_named, u32 named_table_bytes                       (from format 1.2)
    u32 num_params, u32 0                                      (from format 1.3)
    value records (48 bytes): u8 kind, u8 dtype, u8 rank, u8 dynamic mask (1.3; 0 before),
                              u32 dims[8], u64 constant_offset, u32 0
        dtype 6 float32; 1 int8 and 3 int32 from 1.3. Bit d of the mask: dims[d]
        is the upper bound of a dynamic dimension (1.3).
        kind 0 activation; 1 constant: constant_offset is a byte offset into
        the constant section; 2 named (1.2): constant_offset is an index into
        the named-data table
    u32 input value ids; u32 output value ids
    op records: u8 opcode, u8 num_inputs, u16 0, u32 output, u32 inputs[3]
                (+ f32 alpha from format 1.1)
                (+ u32 param_offset, u32 param_count from format 1.3)
    parameter words (1.3): num_params x i32 (docs/quantization.md; the float32 operators of
        format 1.4, the same layout, in reference_backend.float_ops)
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
import operator
import struct

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from backend_kit.aot import schema_name
from reference_backend import float_ops
from reference_backend.compile_specs import CompileOptions
from reference_backend.ops import (
    BACKEND_OPS,
    DTYPE_CODES,
    MAX_RANK,
    SUPPORTED_OPS,
    minor_needed,
    tensor_inputs,
    value_layout,
)
from reference_backend.version import NAMED_DATA_MINOR, QUANT_MINOR

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
_OP_V3 = struct.Struct("<BBHI3IfII")
_PARAMS_HEADER = struct.Struct("<II")
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


def constant_tensors(program: ExportedProgram) -> dict[str, tuple[str, torch.Tensor]]:
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
        raise SerializationError(
            f"named data needs blob format 1.{NAMED_DATA_MINOR}; format 1.{minor} cannot store it"
        )
    file_name = options.named_data_file_name
    constants = constant_tensors(program)
    values: list[tuple[int, int, tuple[int, ...], int, int]] = []  # kind, dtype, shape, mask, offset or index
    ids: dict[str, int] = {}
    constant_data = bytearray()
    named: dict[str, tuple[int, NamedEntry, torch.Tensor, bytes]] = {}  # key -> (table index, entry, data)
    inputs: list[int] = []
    ops: list[bytes] = []
    outputs: list[int] = []
    params: list[int] = []

    def layout_of(node: torch.fx.Node) -> tuple[int, tuple[int, ...], int]:
        layout = value_layout(float_ops.result_value(node))
        if layout is None:
            raise SerializationError(
                f"{node.name} is not a float32, int8 or int32 tensor with static or bounded shape"
            )
        if minor < QUANT_MINOR and (layout[0] != DTYPE_CODES[torch.float32] or layout[2]):
            raise SerializationError(
                f"{node.name}: int8/int32 values and dynamic dimensions need blob format 1.{QUANT_MINOR}; "
                f"format 1.{minor} cannot store them"
            )
        return layout

    def add_value(node: torch.fx.Node, kind: int, offset: int = 0) -> int:
        dtype, shape, mask = layout_of(node)
        if mask and kind != KIND_ACTIVATION:
            raise SerializationError(f"constant {node.name} has a dynamic shape")
        ids[node.name] = len(values)
        values.append((kind, dtype, shape, mask, offset))
        return ids[node.name]

    def add_constant_bytes(raw: bytes) -> int:
        offset = len(constant_data)
        constant_data.extend(raw)
        constant_data.extend(b"\0" * (-len(constant_data) % 16))
        return offset

    def add_int32_constant(data: list[int]) -> int:
        """A constant the pass computed (an int32 bias): a value of its own."""
        raw = torch.tensor(data, dtype=torch.int32).numpy().tobytes()
        values.append((KIND_CONSTANT, DTYPE_CODES[torch.int32], (len(data),), 0, add_constant_bytes(raw)))
        return len(values) - 1

    for node in program.graph.nodes:
        if node.op == "placeholder":
            if node.name in constants:
                if not node.users:
                    continue  # consumed at export time (per-channel scales of folded weights)
                label, tensor = constants[node.name]
                if tensor.dtype == torch.float32 or tensor.dtype not in DTYPE_CODES:
                    data = tensor.detach().to(torch.float32).contiguous()
                else:
                    data = tensor.detach().contiguous()
                raw = data.numpy().tobytes()
                if threshold is not None and len(raw) >= threshold and data.dtype == torch.float32:
                    key = named_data_key(label, raw)
                    if key not in named:
                        named[key] = (len(named), NamedEntry(key, file_name, len(raw)), data, raw)
                    add_value(node, KIND_NAMED, named[key][0])
                else:
                    add_value(node, KIND_CONSTANT, add_constant_bytes(raw))
            else:
                inputs.append(add_value(node, KIND_ACTIVATION))
        elif node.op == "call_function" and node.target is operator.getitem:
            # max_pool2d_with_indices's values: the same value as the op's result (the partitioner claims it
            # only when nothing reads its indices).
            source, index = node.args
            if index != 0 or not isinstance(source, torch.fx.Node) or source.name not in ids:
                raise SerializationError(
                    f"{node.name}: output {index} of {source} is not computed by the runtime"
                )
            ids[node.name] = ids[source.name]
        elif node.op == "call_function":
            ops.append(
                _op_record(node, ids, add_value(node, KIND_ACTIVATION), minor, params, add_int32_constant)
            )
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
    if minor >= QUANT_MINOR:
        parts.append(_PARAMS_HEADER.pack(len(params), 0))
    for kind, dtype, shape, mask, offset in values:
        dims = list(shape) + [0] * (MAX_RANK - len(shape))
        parts.append(_VALUE.pack(kind, dtype, len(shape), mask, *dims, offset, 0))
    parts.append(struct.pack(f"<{len(inputs)}I", *inputs))
    parts.append(struct.pack(f"<{len(outputs)}I", *outputs))
    parts.extend(ops)
    parts.append(struct.pack(f"<{len(params)}i", *params))
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
        header_size, op_size, num_params = _PAYLOAD_HEADER.size + _NAMED_HEADER.size, _OP_V1.size, 0
        if minor >= QUANT_MINOR:
            num_params, _ = _PARAMS_HEADER.unpack_from(payload, header_size)
            header_size, op_size = header_size + _PARAMS_HEADER.size, _OP_V3.size
        pos = (
            header_size
            + num_values * _VALUE.size
            + 4 * (num_inputs + num_outputs)
            + num_ops * op_size
            + 4 * num_params
        )
        end = pos + table_bytes
        if end > len(payload):
            raise SerializationError(
                f"named-data table [{pos}, {end}) lies outside the {len(payload)}-byte payload"
            )
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


def _f32_bits(value: float) -> int:
    return struct.unpack("<i", struct.pack("<f", value))[0]


def _op_params(node: torch.fx.Node, name: str, add_int32_constant) -> tuple[list[int], list[int]]:
    """(parameter words, extra operand value ids) of an op of format 1.3."""
    a = node.args
    if name == "aten::convolution":
        stride, padding, dilation, _transposed, _output_padding, groups = a[3:9]
        return [*stride, *padding, *dilation, groups], []
    if name == "reference_backend::quantize":
        _, inv_scale, zero_point, qmin, qmax = a
        return [_f32_bits(inv_scale), zero_point, qmin, qmax], []
    if name == "reference_backend::dequantize":
        _, scale, zero_point = a
        return [_f32_bits(scale), zero_point], []
    if name == "reference_backend::qlinear":
        _, _, bias, multipliers, shifts, x_zero, out_zero, qmin, qmax = a
        extra = [add_int32_constant(bias)] if bias is not None else []
        return [x_zero, out_zero, qmin, qmax, *multipliers, *shifts], extra
    if name == "reference_backend::qconv2d":
        _, _, bias, stride, padding, dilation, groups, multipliers, shifts, x_zero, out_zero, qmin, qmax = a
        extra = [add_int32_constant(bias)] if bias is not None else []
        return [
            *stride,
            *padding,
            *dilation,
            groups,
            x_zero,
            out_zero,
            qmin,
            qmax,
            *multipliers,
            *shifts,
        ], extra
    if name in float_ops.OPERATORS:
        return float_ops.param_words(node, name), []
    if name == "reference_backend::qadd":
        return list(a[2:10]), []
    if name == "reference_backend::qrelu":
        return list(a[1:7]), []
    return [], []


def _op_record(
    node: torch.fx.Node, ids: dict[str, int], out: int, minor: int, params: list[int], add_int32_constant
) -> bytes:
    name = schema_name(node.target)
    spec = SUPPORTED_OPS.get(name) or BACKEND_OPS.get(name)
    if spec is None or spec.opcode is None or name.startswith("quantized_decomposed::"):
        raise SerializationError(
            f"operator {name or node.target} is not supported by the runtime"
            + (" (the quantize/dequantize fold did not take it)" if spec else "")
        )
    if minor < minor_needed(spec.opcode):
        raise SerializationError(
            f"{node.name}: {name} needs blob format 1.{minor_needed(spec.opcode)}; format 1.{minor} cannot store it"
        )
    operands = tensor_inputs(node)
    try:
        operand_ids = [ids[a.name] for a in operands]
    except (KeyError, AttributeError):
        raise SerializationError(
            f"{node.name}: operands {operands} are not tensors of the subgraph"
        ) from None
    words, extra = _op_params(node, name, add_int32_constant)
    operand_ids += extra
    alpha = float(node.kwargs.get("alpha", 1.0)) if spec.has_alpha else 1.0
    padded = operand_ids + [0] * (3 - len(operand_ids))
    if minor == 0:
        if alpha != 1.0:
            raise SerializationError(
                f"{node.name}: alpha={alpha} needs blob format 1.1; format 1.0 cannot store it"
            )
        return _OP_V0.pack(spec.opcode, len(operand_ids), 0, out, *padded)
    if minor < QUANT_MINOR:
        return _OP_V1.pack(spec.opcode, len(operand_ids), 0, out, *padded, alpha)
    offset = len(params)
    params.extend(int(w) for w in words)
    return _OP_V3.pack(spec.opcode, len(operand_ids), 0, out, *padded, alpha, offset, len(words))
