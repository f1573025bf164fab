"""Edits the reference blob inside a real .pte, as the conformance suite does."""

from __future__ import annotations

import struct
from collections.abc import Callable

from backend_kit.header import checksum
from reference_backend.pte_blobs import delegate_blobs


def replace_blob(pte: bytes, edit: Callable[[bytearray], bytes | bytearray]) -> bytes:
    """``pte`` with its only delegate blob replaced by ``edit(blob)`` (same length)."""
    (blob,) = delegate_blobs(pte)
    at = pte.find(blob.data)
    assert at > 0 and pte.find(blob.data, at + 1) == -1
    new = bytes(edit(bytearray(blob.data)))
    assert len(new) == len(blob.data)
    return pte[:at] + new + pte[at + len(new) :]


def set_u16(offset: int, value: int, fix_checksum: bool = True):
    """An edit that writes a u16 header field and recomputes the checksum."""

    def edit(raw: bytearray) -> bytearray:
        struct.pack_into("<H", raw, offset, value)
        if fix_checksum:
            refresh_checksum(raw)
        return raw

    return edit


def refresh_checksum(raw: bytearray) -> bytearray:
    length = struct.unpack_from("<H", raw, 4)[0]
    payload_size = struct.unpack_from("<Q", raw, 24)[0]
    crc = checksum(bytes(raw[:length]), bytes(raw[length : length + payload_size]))
    struct.pack_into("<I", raw, 32, crc)
    return raw
