"""Edits the reference blob inside a real .pte, as the conformance suite does."""

from __future__ import annotations

from collections.abc import Callable

from backend_kit.header import rewrite
from reference_backend.pte_blobs import delegate_blobs


def replace_blob(pte: bytes, edit: Callable[[bytearray], bytes | bytearray]) -> bytes:
    """``pte`` with its only delegate blob replaced by ``edit(blob)`` (same length)."""
    (blob,) = delegate_blobs(pte)
    at = pte.find(blob.data)
    assert at > 0 and pte.find(blob.data, at + 1) == -1
    new = bytes(edit(bytearray(blob.data)))
    assert len(new) == len(blob.data)
    return pte[:at] + new + pte[at + len(new) :]


def set_fields(fix_checksum: bool = True, **fields: int | tuple[int, ...] | bytes):
    """An edit that rewrites header fields (names of ``backend_kit.header.FIELDS``) and, unless
    told not to, recomputes the checksum."""

    def edit(raw: bytearray) -> bytearray:
        raw[:] = rewrite(raw, fields, fix_checksum=fix_checksum)
        return raw

    return edit


def refresh_checksum(raw: bytearray) -> bytearray:
    """``raw`` (changed in place) with the checksum its header and payload give."""
    raw[:] = rewrite(raw, {})
    return raw
