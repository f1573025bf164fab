"""Real programs exported with the reference backend, and forgeries of their
blobs that keep a valid checksum (issue 31): each forgery edits value
records, op records or parameter words of the payload (payload_fields) and
recomputes the checksum, as an attacker with the project's own tools would."""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable

import torch
from executorch.exir import to_edge_transform_and_lower
from forge import refresh_checksum, replace_blob
from payload_fields import PayloadFields, read_fields

import reference_backend
from backend_kit.header import Header, decode, encode
from reference_backend.pte_blobs import delegate_blobs


class ConvRelu(torch.nn.Module):
    """conv2d (3 -> 3 channels, 3x3, padding 1) then relu: both delegated."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


class QuantConv(torch.nn.Module):
    """One conv2d, quantized: quantize, qconv2d, dequantize in the delegate."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 4, 1)

    def forward(self, x):
        return self.conv(x)


def _lower(model: torch.nn.Module, example: tuple) -> bytes:
    edge = to_edge_transform_and_lower(
        torch.export.export(model, example), partitioner=[reference_backend.ReferencePartitioner()]
    )
    return edge.to_executorch().buffer


@functools.cache
def conv_relu_pte() -> bytes:
    torch.manual_seed(0)
    return _lower(ConvRelu().eval(), (torch.randn(1, 3, 8, 8),))


@functools.cache
def quant_conv_pte() -> bytes:
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from reference_backend.quantizer import ReferenceQuantizer

    torch.manual_seed(0)
    example = (torch.randn(1, 2, 4, 4),)
    prepared = prepare_pt2e(torch.export.export(QuantConv().eval(), example).module(), ReferenceQuantizer())
    for _ in range(4):
        prepared(torch.randn(1, 2, 4, 4))
    return _lower(convert_pt2e(prepared), example)


#: The memory limit a forger writes into the header: the application's default
#: maximum, so that only that maximum (not the honest limit) bounds the forgery.
FORGED_MEMORY_LIMIT = 2 << 30


def with_forged_memory_limit(h: Header, payload: bytes) -> bytes:
    """The blob of header ``h`` (fields kept, checksum recomputed) with ``payload`` and the memory limit
    FORGED_MEMORY_LIMIT."""
    header = Header(
        h.backend_id,
        h.blob_format,
        h.backend_version,
        h.executorch_version,
        memory_limit=FORGED_MEMORY_LIMIT,
        named_data_checksums=h.named_data_checksums,
    )
    return encode(header, payload)


@functools.cache
def quant_net_pte() -> bytes:
    """The conformance sample quant_net (qconv2d, qadd, qrelu, qlinear), quantized and lowered."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from reference_backend.conformance import _quant_inputs, _QuantNet
    from reference_backend.quantizer import ReferenceQuantizer

    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    example = _quant_inputs(generator)
    prepared = prepare_pt2e(torch.export.export(_QuantNet().eval(), example).module(), ReferenceQuantizer())
    for _ in range(4):
        prepared(*_quant_inputs(generator))
    return _lower(convert_pt2e(prepared), example)


def forge(pte: bytes, edit: Callable[[bytearray, PayloadFields], None]) -> bytes:
    """``pte`` with its blob's payload edited by ``edit(payload, fields)``, the
    header's memory limit (header format 2) raised to FORGED_MEMORY_LIMIT and
    the checksum recomputed: everything an attacker controls."""

    def apply(raw: bytearray) -> bytes:
        h = decode(bytes(raw))
        payload = bytearray(raw[h.header_length :])
        edit(payload, read_fields(bytes(payload), h.blob_format[1]))
        if h.memory_limit is None:
            raw[h.header_length :] = payload
            return refresh_checksum(raw)
        return with_forged_memory_limit(h, bytes(payload))

    return replace_blob(pte, apply)


def fields_of(pte: bytes) -> PayloadFields:
    (blob,) = delegate_blobs(pte)
    h = decode(blob.data)
    return read_fields(blob.data[h.header_length :], h.blob_format[1])


def set_dims(payload: bytearray, value, dims: list[int]) -> None:
    """Value record ``value`` gets rank len(dims) and these dims."""
    payload[value.at + 2] = len(dims)
    struct.pack_into("<8I", payload, value.at + 4, *dims, *[0] * (8 - len(dims)))


def set_operands(payload: bytearray, op, inputs: list[int]) -> None:
    payload[op.at + 1] = len(inputs)
    struct.pack_into("<3I", payload, op.at + 8, *inputs, *[0] * (3 - len(inputs)))


def set_param(payload: bytearray, fields: PayloadFields, op, k: int, word: int) -> None:
    struct.pack_into("<i", payload, fields.param_at(op, k), word)


def op_named(fields: PayloadFields, name: str):
    return next(op for op in fields.ops if op.name == name)
