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


def with_header_fields(
    blob: bytes,
    header_format: int | None = None,
    blob_format: tuple[int, int] | None = None,
    backend_version: tuple[int, int, int] | None = None,
) -> bytes:
    """``blob`` (whose header must decode) with the given contract header fields rewritten and the
    checksum recomputed."""
    from backend_kit.header import rewrite
    from conformance.inspection.blob_header import read_header

    read_header(blob)
    fields: dict[str, int | tuple[int, ...] | None] = {
        "header_format_version": header_format,
        "blob_format": None if blob_format is None else tuple(blob_format),
        "backend_version": None if backend_version is None else tuple(backend_version),
    }
    return rewrite(blob, {name: value for name, value in fields.items() if value is not None})
