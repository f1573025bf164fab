"""backend_kit.header's field table, claimed_header_format and rewrite: what code outside the kit
uses instead of spelling the header's magic or offsets."""

from __future__ import annotations

import struct

import pytest

from backend_kit.header import (
    FIELDS,
    FIXED,
    FIXED_LENGTH,
    INCOMPATIBLE,
    MAGIC,
    Header,
    HeaderError,
    claimed_header_format,
    decode,
    encode,
    rewrite,
)

BLOB = encode(Header("B", (1, 4), (0, 4, 0), (1, 5, 1)), b"payload!")


def test_the_field_table_reads_what_decode_reads():
    header = decode(BLOB)
    read = {name: struct.unpack_from("<" + form, BLOB, at) for name, (at, form) in FIELDS.items()}
    assert read["magic"] == (MAGIC,)
    assert read["blob_format"] == header.blob_format and read["backend_version"] == header.backend_version
    assert read["executorch_version"] == header.executorch_version
    for name in ("header_length", "header_format_version", "payload_size", "checksum", "backend_id_offset"):
        assert read[name] == (getattr(header, name),), name
    assert read["backend_id_length"] == (1,)
    assert FIXED.size == FIXED_LENGTH == FIELDS["backend_id_length"][0] + 2


@pytest.mark.parametrize(
    ("blob", "claimed"),
    [
        (BLOB, 2),
        (MAGIC + b"\0\0\x07\0", 7),
        (MAGIC + b"\0\0\x07", None),
        (b"XNNP\0\0\x01\0", None),
        (b"", None),
    ],
)
def test_claimed_header_format(blob, claimed):
    assert claimed_header_format(blob) == claimed


def test_rewrite_changes_only_the_named_fields_and_keeps_the_checksum_valid():
    forged = rewrite(BLOB, {"blob_format": (2, 4), "backend_version": (9, 8, 7)})
    assert len(forged) == len(BLOB)
    header = decode(forged)
    assert header.blob_format == (2, 4) and header.backend_version == (9, 8, 7)
    assert header.executorch_version == (1, 5, 1) and forged[FIXED_LENGTH:] == BLOB[FIXED_LENGTH:]


def test_rewrite_without_the_checksum_leaves_a_stale_one():
    with pytest.raises(HeaderError, match="checksum mismatch"):
        decode(rewrite(BLOB, {"blob_format": (1, 5)}, fix_checksum=False))


def test_rewrite_forges_what_a_runtime_must_refuse():
    with pytest.raises(HeaderError, match="header format 9") as caught:
        decode(rewrite(BLOB, {"header_format_version": 9}))
    assert caught.value.verdict == INCOMPATIBLE
    with pytest.raises(HeaderError, match="wrong magic 'XNNP'"):
        decode(rewrite(BLOB, {"magic": b"XNNP"}))


@pytest.mark.parametrize(
    ("blob", "fields", "says"),
    [
        (BLOB[:39], {"blob_format": (1, 0)}, "39 bytes hold no fixed header"),
        (BLOB, {"flavour": 1}, "the header has no field 'flavour'"),
        (BLOB, {"header_length": 1 << 16}, "header field header_length cannot hold 65536"),
        (BLOB, {"blob_format": (1,)}, "header field blob_format cannot hold (1,)"),
    ],
)
def test_rewrite_refuses_what_the_layout_cannot_hold(blob, fields, says):
    with pytest.raises(HeaderError, match=says.replace("(", r"\(").replace(")", r"\)")):
        rewrite(blob, fields)
