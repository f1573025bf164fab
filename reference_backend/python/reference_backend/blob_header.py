"""The contract blob header ("ECVH"): encoder and decoder.

Byte layout (little-endian), specified in docs/blob-header.md::

    0  magic b"ECVH"               24 u64 payload_size
    4  u16 header_length           32 u32 checksum (CRC-32 of header with this
    6  u16 header_format_version          field zeroed, then the payload)
    8  u16 blob_format major,minor 36 u16 backend_id_offset
   12  u16 x3 backend version      38 u16 backend_id_length
   18  u16 x3 executorch version   40 backend id (UTF-8), zero padding to 8

The fixed part is read with ``struct``: it is a handful of scalars at fixed
offsets, which is what ``struct`` is for; there is no schema library to use.
"""

from __future__ import annotations

import dataclasses
import struct
import zlib

MAGIC = b"ECVH"
HEADER_FORMAT_VERSION = 1
FIXED_LENGTH = 40
CHECKSUM_OFFSET = 32

_FIXED = struct.Struct("<4sHH2H3H3HQIHH")
assert _FIXED.size == FIXED_LENGTH


class BlobHeaderError(ValueError):
    """A blob does not start with a readable contract header."""


@dataclasses.dataclass(frozen=True)
class BlobHeader:
    """The header fields. ``header_length`` and ``checksum`` are computed by
    :func:`encode_blob`; :func:`decode_header` fills them from the blob."""

    backend_id: str
    blob_format: tuple[int, int]
    backend_version: tuple[int, int, int]
    executorch_version: tuple[int, int, int]
    payload_size: int = 0
    header_format_version: int = HEADER_FORMAT_VERSION
    header_length: int = 0
    checksum: int = 0
    backend_id_offset: int = FIXED_LENGTH


def blob_checksum(header: bytes, payload: bytes | memoryview) -> int:
    """CRC-32 over ``header`` with its checksum field as zero, then ``payload``."""
    crc = zlib.crc32(header[:CHECKSUM_OFFSET])
    crc = zlib.crc32(b"\0\0\0\0", crc)
    crc = zlib.crc32(header[CHECKSUM_OFFSET + 4 :], crc)
    return zlib.crc32(payload, crc)


def _u16(name: str, value: int) -> int:
    if not 0 <= value <= 0xFFFF:
        raise BlobHeaderError(f"{name} {value} does not fit the header's u16 field")
    return value


def encode_blob(header: BlobHeader, payload: bytes) -> bytes:
    """Returns header + payload, with length, payload size and checksum filled in."""
    ident = header.backend_id.encode("utf-8")
    if not 0 < len(ident) <= 255:
        raise BlobHeaderError(f"backend id {header.backend_id!r} must be 1 to 255 bytes")
    length = (FIXED_LENGTH + len(ident) + 7) // 8 * 8
    fields = [
        MAGIC,
        length,
        _u16("header_format_version", header.header_format_version),
        *(_u16("blob_format", v) for v in header.blob_format),
        *(_u16("backend_version", v) for v in header.backend_version),
        *(_u16("executorch_version", v) for v in header.executorch_version),
        len(payload),
        0,
        FIXED_LENGTH,
        len(ident),
    ]
    raw = _FIXED.pack(*fields) + ident + b"\0" * (length - FIXED_LENGTH - len(ident))
    crc = blob_checksum(raw, payload)
    return raw[:CHECKSUM_OFFSET] + struct.pack("<I", crc) + raw[CHECKSUM_OFFSET + 4 :] + payload


def decode_header(blob: bytes | memoryview) -> BlobHeader:
    """Decodes and checks the header of ``blob`` (magic, lengths, checksum).

    Version compatibility is not judged here: that is the runtime's verdict
    (``reference_backend.runtime.judge_blob``). Raises BlobHeaderError naming
    the problem and its offset.
    """
    blob = bytes(blob)
    if len(blob) < 8:
        raise BlobHeaderError(
            f"truncated: {len(blob)} bytes, the header needs at least {FIXED_LENGTH}"
        )
    if blob[:4] != MAGIC:
        raise BlobHeaderError(f"wrong magic {blob[:4]!r} at offset 0, expected {MAGIC!r}")
    length, version = struct.unpack_from("<HH", blob, 4)
    if version != HEADER_FORMAT_VERSION:
        raise BlobHeaderError(
            f"header format version {version} at offset 6 is not known "
            f"(this decoder reads {HEADER_FORMAT_VERSION})"
        )
    if not FIXED_LENGTH <= length <= len(blob):
        raise BlobHeaderError(
            f"header_length {length} at offset 4 is outside [{FIXED_LENGTH}, {len(blob)}]"
        )
    (_, _, _, bmaj, bmin, v0, v1, v2, e0, e1, e2, payload_size, checksum, id_off, id_len) = (
        _FIXED.unpack_from(blob)
    )
    if payload_size > len(blob) - length:
        raise BlobHeaderError(
            f"truncated: payload_size {payload_size} at offset 24, but only "
            f"{len(blob) - length} bytes follow the {length}-byte header"
        )
    actual = blob_checksum(blob[:length], memoryview(blob)[length : length + payload_size])
    if actual != checksum:
        raise BlobHeaderError(
            f"checksum mismatch at offset 32: header says 0x{checksum:08x}, "
            f"header and payload give 0x{actual:08x}"
        )
    if id_off < FIXED_LENGTH or id_len == 0 or id_off + id_len > length:
        raise BlobHeaderError(
            f"backend id [offset {id_off}, length {id_len}] lies outside the "
            f"{length}-byte header"
        )
    try:
        ident = blob[id_off : id_off + id_len].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BlobHeaderError(f"backend id at offset {id_off} is not UTF-8: {exc}") from None
    return BlobHeader(
        backend_id=ident,
        blob_format=(bmaj, bmin),
        backend_version=(v0, v1, v2),
        executorch_version=(e0, e1, e2),
        payload_size=payload_size,
        header_format_version=version,
        header_length=length,
        checksum=checksum,
        backend_id_offset=id_off,
    )


def payload_of(blob: bytes | memoryview) -> memoryview:
    """The payload bytes of a blob whose header decodes."""
    header = decode_header(blob)
    return memoryview(blob)[header.header_length : header.header_length + header.payload_size]
