"""The fixed-layout prefix of a .pte file: root offset, identifier, extended header.

Layout (all integers little-endian)::

    0   u32  offset of the flatbuffer root table
    4   4s   file identifier, e.g. b"ET12"
    8   4s   b"eh00"        -- extended header, present when the file has segments
    12  u32  header length   (24 in early releases, 32 since segment_data_size)
    16  u64  program_size    (bytes of flatbuffer data, header included)
    24  u64  segment_base_offset  (file offset of segment data, 0 if none)
    32  u64  segment_data_size    (only when length >= 32)

The extended header is not part of the flatbuffer: the writer splices it in
after the identifier and shifts the root offset past it, so the generated
bindings cannot describe it and it is read here with ``struct``.
"""

from __future__ import annotations

import struct

from .errors import PteFormatError
from .model import ExtendedHeader

PREFIX_SIZE = 8  # root offset + file identifier
IDENTIFIER_OFFSET = 4
EXTENDED_HEADER_OFFSET = 8
EXTENDED_HEADER_MAGIC = b"eh00"
EXTENDED_HEADER_MIN_LENGTH = 24  # magic, length, program_size, segment_base_offset
EXTENDED_HEADER_FULL_LENGTH = 32  # ... plus segment_data_size

# struct, not the generated bindings: this header sits outside the flatbuffer.
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


def check_prefix(data: bytes, expected_identifier: bytes) -> str:
    """Validate the root offset slot and identifier; return the identifier."""
    if len(data) < PREFIX_SIZE:
        raise PteFormatError(
            f"truncated file: {len(data)} bytes, need at least {PREFIX_SIZE} for the "
            f"root offset and file identifier (file ends at offset {len(data)})",
            len(data),
        )
    ident = bytes(data[IDENTIFIER_OFFSET:PREFIX_SIZE])
    if ident != expected_identifier:
        raise PteFormatError(
            f"wrong file identifier {ident!r} at offset {IDENTIFIER_OFFSET}, "
            f"expected {expected_identifier!r}",
            IDENTIFIER_OFFSET,
        )
    return ident.decode("ascii")


def read_extended_header(data: bytes) -> ExtendedHeader | None:
    """Parse and validate the extended header; None if the file has none.

    A file has one exactly when the magic b"eh00" follows the identifier.
    """
    start = EXTENDED_HEADER_OFFSET
    size = len(data)
    if bytes(data[start : start + 4]) != EXTENDED_HEADER_MAGIC:
        return None
    if size < start + 8:
        raise PteFormatError(
            f"truncated extended header: file is {size} bytes, need {start + 8} "
            f"to read the header length at offset {start + 4}",
            start + 4,
        )
    (length,) = _U32.unpack_from(data, start + 4)
    if length < EXTENDED_HEADER_MIN_LENGTH:
        raise PteFormatError(
            f"extended header length {length} at offset {start + 4} is less than "
            f"the minimum {EXTENDED_HEADER_MIN_LENGTH}",
            start + 4,
        )
    if size < start + length:
        raise PteFormatError(
            f"extended header at offset {start} claims {length} bytes, but the file has only {size} bytes",
            start,
        )
    (program_size,) = _U64.unpack_from(data, start + 8)
    (base,) = _U64.unpack_from(data, start + 16)
    data_size: int | None = None
    if length >= EXTENDED_HEADER_FULL_LENGTH:
        (data_size,) = _U64.unpack_from(data, start + 24)

    if not start + length <= program_size <= size:
        raise PteFormatError(
            f"extended header program_size {program_size} at offset {start + 8} is "
            f"outside [{start + length}, {size}] (header end, file size)",
            start + 8,
        )
    if base != 0 and not program_size <= base <= size:
        raise PteFormatError(
            f"extended header segment_base_offset {base} at offset {start + 16} is "
            f"outside [{program_size}, {size}] (program_size, file size)",
            start + 16,
        )
    if data_size is not None and base + data_size > size:
        raise PteFormatError(
            f"extended header segment_data_size {data_size} at offset {start + 24}: "
            f"segment data [{base}, {base + data_size}) extends past end of file "
            f"(size {size})",
            start + 24,
        )
    return ExtendedHeader(
        offset=start,
        magic=EXTENDED_HEADER_MAGIC,
        length=length,
        program_size=program_size,
        segment_base_offset=base,
        segment_data_size=data_size,
    )
