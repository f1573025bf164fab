"""Rewrites a delegate blob inside a real .pte, so that every vendor's runtime
is tested with the same forged input."""

from __future__ import annotations

from conformance.pte import Delegate


def replace_delegate_data(pte: bytes, delegate: Delegate, new: bytes) -> bytes:
    """``pte`` with ``delegate``'s blob replaced by ``new`` of the same length."""
    if len(new) != len(delegate.data):
        raise ValueError(f"replacement is {len(new)} bytes, the blob is {len(delegate.data)}")
    start = delegate.data_offset
    if pte[start : start + len(new)] != delegate.data:
        raise ValueError(f"the blob is not at offset {start} of this .pte")
    return pte[:start] + new + pte[start + len(new) :]


def rename_backend(pte: bytes, backend_id: str, new_id: str) -> bytes:
    """``pte`` whose delegates name ``new_id`` (same length) instead of ``backend_id``."""
    old, new = backend_id.encode(), new_id.encode()
    if len(old) != len(new):
        raise ValueError("the new id must have the same length")
    # flatbuffer strings are length-prefixed and NUL-terminated
    needle = len(old).to_bytes(4, "little") + old + b"\0"
    if needle not in pte:
        raise ValueError(f"backend id {backend_id!r} is not stored in this .pte")
    return pte.replace(needle, len(new).to_bytes(4, "little") + new + b"\0")


#: Offsets of the header fields the forgeries rewrite (docs/blob-header.md, header format 1).
_HEADER_FORMAT_AT = 6
_BLOB_FORMAT_AT = 8
_BACKEND_VERSION_AT = 12


def with_header_fields(
    blob: bytes,
    header_format: int | None = None,
    blob_format: tuple[int, int] | None = None,
    backend_version: tuple[int, int, int] | None = None,
) -> bytes:
    """``blob`` with the given contract header fields rewritten and the checksum recomputed."""
    import struct

    from conformance.inspection.blob_header import CHECKSUM_AT, checksum, read_header

    header = read_header(blob)
    raw = bytearray(blob)
    if header_format is not None:
        struct.pack_into("<H", raw, _HEADER_FORMAT_AT, header_format)
    if blob_format is not None:
        struct.pack_into("<HH", raw, _BLOB_FORMAT_AT, *blob_format)
    if backend_version is not None:
        struct.pack_into("<3H", raw, _BACKEND_VERSION_AT, *backend_version)
    struct.pack_into("<I", raw, CHECKSUM_AT, checksum(bytes(raw), header.header_length, header.payload_size))
    return bytes(raw)
