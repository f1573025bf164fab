"""The contract blob header (docs/blob-header.md), read and rewritten by the
suite. Deliberately a second, independent implementation: the suite must not
trust a vendor's codec, and the reference backend's codec is checked against
this one by the same test vectors.

The header is a fixed set of little-endian scalars, so ``struct`` reads it.
"""

from __future__ import annotations

import dataclasses
import struct
import zlib

MAGIC = b"ECVH"
FIXED = struct.Struct("<4sHH2H3H3HQIHH")
CHECKSUM_AT = 32


class HeaderError(ValueError):
    """The bytes do not start with a valid contract header."""


@dataclasses.dataclass(frozen=True)
class ContractHeader:
    header_length: int
    header_format_version: int
    blob_format: tuple[int, int]
    backend_version: tuple[int, int, int]
    executorch_version: tuple[int, int, int]
    payload_size: int
    checksum: int
    backend_id: str


def checksum(blob: bytes | memoryview, header_length: int, payload_size: int) -> int:
    """CRC-32 of the header with the checksum field zeroed, then the payload."""
    zeroed = bytes(blob[:CHECKSUM_AT]) + b"\0\0\0\0" + bytes(blob[CHECKSUM_AT + 4 : header_length])
    return zlib.crc32(blob[header_length : header_length + payload_size], zlib.crc32(zeroed))


def read_header(blob: bytes | memoryview) -> ContractHeader:
    """Parses and validates the header at the start of ``blob``."""
    if len(blob) < FIXED.size:
        raise HeaderError(f"blob of {len(blob)} bytes is shorter than the {FIXED.size}-byte contract header")
    (magic, length, version, fmaj, fmin, b0, b1, b2, e0, e1, e2, size, crc, id_off, id_len) = FIXED.unpack_from(
        blob
    )
    if magic != MAGIC:
        raise HeaderError(f"blob starts with {magic!r}, not the contract header magic {MAGIC!r}")
    if version != 1:
        raise HeaderError(f"header format version {version} (offset 6) is not 1")
    if not FIXED.size <= length <= len(blob):
        raise HeaderError(f"header_length {length} (offset 4) is outside [{FIXED.size}, {len(blob)}]")
    if size != len(blob) - length:
        raise HeaderError(f"payload_size {size} (offset 24) but {len(blob) - length} bytes follow the header")
    actual = checksum(blob, length, size)
    if actual != crc:
        raise HeaderError(f"checksum 0x{crc:08x} (offset 32) does not match 0x{actual:08x}")
    if id_off < FIXED.size or id_len == 0 or id_off + id_len > length:
        raise HeaderError(f"backend id [offset {id_off}, length {id_len}] is outside the header")
    try:
        ident = bytes(blob[id_off : id_off + id_len]).decode("utf-8")
    except UnicodeDecodeError:
        raise HeaderError(f"backend id at offset {id_off} is not UTF-8") from None
    return ContractHeader(length, version, (fmaj, fmin), (b0, b1, b2), (e0, e1, e2), size, crc, ident)


def with_blob_format(blob: bytes, major: int, minor: int) -> bytes:
    """``blob`` claiming blob format major.minor, with a valid checksum."""
    header = read_header(blob)
    raw = bytearray(blob)
    struct.pack_into("<HH", raw, 8, major, minor)
    struct.pack_into("<I", raw, CHECKSUM_AT, checksum(bytes(raw), header.header_length, header.payload_size))
    return bytes(raw)
