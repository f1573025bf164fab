"""Where the fields of a reference blob's payload are (blob format 1.x,
docs/blob-header.md "Payload"), for the tests and the fuzzer that forge real
blobs: value records (kind, dtype, rank, dims), op records (opcode, operands,
parameter offset and count) and the parameter words of format 1.3 (and 1.4,
the same layout).

Reads only; callers write with ``struct`` at the offsets given and then
recompute the blob's checksum (forge.refresh_checksum). The layout mirrors
reference_backend.serialize, which writes it."""

from __future__ import annotations

import dataclasses
import struct

#: Opcode -> operator name (docs/quantization.md; reference_backend.ops).
OPCODES = {
    1: "add",
    2: "sub",
    3: "mul",
    4: "relu",
    5: "linear",
    6: "conv2d",
    7: "quantize",
    8: "dequantize",
    9: "qlinear",
    10: "qconv2d",
    11: "qadd",
    12: "qrelu",
    # Format 1.4 (float_ops.py):
    13: "div",
    14: "sigmoid",
    15: "tanh",
    16: "clamp",
    17: "max_pool2d",
    18: "avg_pool2d",
    19: "softmax",
    20: "mean",
    21: "permute",
    22: "view",
}
CONV_OPCODES = (6, 10)
#: Words of the conv geometry: stride h, w; padding h, w; dilation h, w; groups.
CONV_GEOMETRY = ("stride_h", "stride_w", "pad_h", "pad_w", "dilation_h", "dilation_w", "groups")
VALUE_RECORD = 48
DIMS_AT = 4  # inside a value record
_OP_RECORD = {0: 20, 1: 24, 2: 24, 3: 32}


@dataclasses.dataclass
class ValueField:
    index: int
    at: int  # payload offset of the record
    kind: int
    dtype: int
    rank: int
    mask: int
    dims: list[int]

    def dim_at(self, d: int) -> int:
        """Payload offset of the u32 of dimension ``d``."""
        return self.at + DIMS_AT + 4 * d


@dataclasses.dataclass
class OpField:
    index: int
    at: int
    code: int
    inputs: list[int]
    output: int
    param_offset: int
    param_count: int

    @property
    def name(self) -> str:
        return OPCODES.get(self.code, f"opcode {self.code}")


@dataclasses.dataclass
class PayloadFields:
    minor: int
    values: list[ValueField]
    inputs: list[int]
    outputs: list[int]
    ops: list[OpField]
    params_at: int  # payload offset of parameter word 0 (format 1.3)
    num_params: int

    def param_at(self, op: OpField, k: int) -> int:
        """Payload offset of the op's parameter word ``k``."""
        return self.params_at + 4 * (op.param_offset + k)

    def param(self, payload: bytes, op: OpField, k: int) -> int:
        return struct.unpack_from("<i", payload, self.param_at(op, k))[0]


def read_fields(payload: bytes, minor: int) -> PayloadFields:
    """The fields of a payload the runtime accepted (ValueError if it is too short)."""
    num_values, num_inputs, num_outputs, num_ops, _constant_bytes = struct.unpack_from("<IIIIQ", payload, 0)
    at = 24 + (8 if minor >= 2 else 0)
    num_params = 0
    if minor >= 3:
        (num_params,) = struct.unpack_from("<I", payload, at)
        at += 8
    values = []
    for i in range(num_values):
        kind, dtype, rank, mask = struct.unpack_from("<BBBB", payload, at)
        dims = list(struct.unpack_from("<8I", payload, at + DIMS_AT))[:rank]
        values.append(ValueField(i, at, kind, dtype, rank, mask, dims))
        at += VALUE_RECORD
    inputs = list(struct.unpack_from(f"<{num_inputs}I", payload, at))
    at += 4 * num_inputs
    outputs = list(struct.unpack_from(f"<{num_outputs}I", payload, at))
    at += 4 * num_outputs
    ops = []
    size = _OP_RECORD[min(minor, 3)]
    for i in range(num_ops):
        code, n = struct.unpack_from("<BB", payload, at)
        output, *operands = struct.unpack_from("<4I", payload, at + 4)
        offset, count = struct.unpack_from("<II", payload, at + 24) if minor >= 3 else (0, 0)
        ops.append(OpField(i, at, code, list(operands[:n]), output, offset, count))
        at += size
    return PayloadFields(minor, values, inputs, outputs, ops, at, num_params)
