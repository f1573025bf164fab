"""Regenerates blob_headers.json, the test vectors of the contract header
that the kit's Python codec (backend_kit.header), its C++ header
(backend_kit/header.h, tests/kit/test_header_vectors.py), the reference
runtime (reference_backend/tests/test_blob_header.py) and the suite's
adapter (tests/conformance/test_contract_header.py) are all held to.

    python kit/vectors/make_vectors.py

Vectors of header format 2 (CRC-32C, extension records) and of format 1
(CRC-32; still read, names starting "format1_"). Each vector is a whole blob
(header + an 8-byte payload) with what a decoder
must make of it and what the runtime RUNTIME below (the reference runtime:
blob formats 1.0..1.4, header formats 1 and 2, version 0.4.0, built for executorch 1.5.1) must
decide, with its exact log line. Rerun after changing the header format or
the rules, and review the diff.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from backend_kit.header import (
    EXTENSION,
    EXTENSION_REQUIRED,
    TAG_MEMORY_LIMIT,
    TAG_NAMED_DATA_CHECKSUMS,
    Header,
    HeaderError,
    RuntimeVersions,
    checksum,
    decode,
    encode,
    judge,
)

PAYLOAD = bytes(range(8))
ID = "ReferenceBackend"
#: The runtime whose verdicts the vectors record (the reference runtime 0.4.0).
RUNTIME = RuntimeVersions(
    backend_id=ID,
    distribution="executorch-reference-backend",
    backend_version=(0, 4, 0),
    executorch_version=(1, 5, 1),
    blob_format_major=1,
    blob_format_minor_min=0,
    blob_format_minor=4,
    current_format_since=(0, 4, 0),
)


def blob(fmt=(1, 4), backend=(0, 4, 0), et=(1, 5, 1), backend_id=ID, header_format=2, **records) -> bytes:
    return encode(
        Header(backend_id, fmt, backend, et, header_format_version=header_format, **records), PAYLOAD
    )


def with_records(records: bytes) -> bytes:
    """A format-2 blob with ``records`` (raw extension records) before the id."""
    ident = ID.encode()
    fixed = bytearray(blob()[:40])
    id_off = 40 + len(records)
    length = (id_off + len(ident) + 7) // 8 * 8
    struct.pack_into("<H", fixed, 4, length)
    struct.pack_into("<HH", fixed, 36, id_off, len(ident))
    raw = bytearray(bytes(fixed) + records + ident + b"\0" * (length - id_off - len(ident)) + PAYLOAD)
    return rechecksum(raw, length)


def record(tag: int, value: bytes, flags: int = 0) -> bytes:
    return EXTENSION.pack(tag, flags, len(value)) + value + b"\0" * (-len(value) % 8)


def rechecksum(raw: bytearray, header_length: int) -> bytes:
    crc = checksum(bytes(raw[:header_length]), bytes(raw[header_length:]))
    struct.pack_into("<I", raw, 32, crc)
    return bytes(raw)


def with_header_version(version: int) -> bytes:
    raw = bytearray(blob())
    struct.pack_into("<H", raw, 6, version)
    return rechecksum(raw, 56)


def with_extra_field() -> bytes:
    """A format-1 header with 8 more bytes before the id (offset 48, length 64), which format 1 skips."""
    ident = ID.encode()
    raw = bytearray(blob(header_format=1))
    fixed = raw[:40]
    struct.pack_into("<HH", fixed, 36, 48, len(ident))
    struct.pack_into("<H", fixed, 4, 64)
    new = bytearray(fixed + b"\xab" * 8 + ident + b"\0" * (64 - 48 - len(ident)) + PAYLOAD)
    return rechecksum(new, 64)


def format1_with_crc32c() -> bytes:
    """A format-1 header carrying a CRC-32C: format 1 is checked with CRC-32, so this is a mismatch."""
    raw = bytearray(blob())
    struct.pack_into("<H", raw, 6, 1)
    raw = bytearray(rechecksum(raw, 56))
    struct.pack_into("<H", raw, 6, 2)
    crc = checksum(bytes(raw[:56]), bytes(raw[56:]))
    struct.pack_into("<I", raw, 32, crc)
    struct.pack_into("<H", raw, 6, 1)
    return bytes(raw)


def with_id_bytes(ident: bytes) -> bytes:
    raw = bytearray(blob())
    raw[40 : 40 + len(ident)] = ident
    return rechecksum(raw, 56)


def with_id_span(offset: int, length: int) -> bytes:
    raw = bytearray(blob())
    struct.pack_into("<HH", raw, 36, offset, length)
    return rechecksum(raw, 56)


def fields(fmt=(1, 4), backend=(0, 4, 0), et=(1, 5, 1), length=56, backend_id=ID, header_format=2) -> dict:
    return {
        "header_length": length,
        "header_format_version": header_format,
        "blob_format": list(fmt),
        "backend_version": list(backend),
        "executorch_version": list(et),
        "payload_size": len(PAYLOAD),
        "backend_id": backend_id,
    }


def vectors() -> list[dict]:
    good = blob()
    bad_crc = bytearray(good)
    bad_crc[-1] ^= 0xFF
    old = blob(header_format=1)
    old_bad_crc = bytearray(old)
    old_bad_crc[-1] ^= 0xFF
    return [
        {"name": "current", "blob": good, "fields": fields(), "verdict": "compatible", "message": []},
        {
            "name": "older_minor",
            "blob": blob(fmt=(1, 0), backend=(0, 1, 0)),
            "fields": fields(fmt=(1, 0), backend=(0, 1, 0)),
            "verdict": "compatible, re-export recommended",
            "message": [
                "warning: old blob, runs",
                "format 1.0, written by 0.1.0 with executorch 1.5.1",
                "reads formats 1.0-1.4",
                "fix: re-export with executorch-reference-backend>=0.4.0",
            ],
        },
        {
            "name": "previous_minor",
            "blob": blob(fmt=(1, 3), backend=(0, 3, 0)),
            "fields": fields(fmt=(1, 3), backend=(0, 3, 0)),
            "verdict": "compatible, re-export recommended",
            "message": [
                "warning: old blob, runs",
                "format 1.3, written by 0.3.0 with executorch 1.5.1",
                "reads formats 1.0-1.4",
                "fix: re-export with executorch-reference-backend>=0.4.0",
            ],
        },
        {
            "name": "newer_minor",
            "blob": blob(fmt=(1, 5), backend=(0, 5, 0)),
            "fields": fields(fmt=(1, 5), backend=(0, 5, 0)),
            "verdict": "incompatible",
            "message": [
                "incompatible blob",
                "format 1.5, written by 0.5.0",
                "runtime 0.4.0 for executorch 1.5",
                "reads formats 1.0-1.4",
                "fix: use a runtime from executorch-reference-backend>=0.5.0, or re-export with 0.4.0",
            ],
        },
        {
            "name": "newer_major",
            "blob": blob(fmt=(2, 0), backend=(1, 0, 0), et=(1, 7, 0)),
            "fields": fields(fmt=(2, 0), backend=(1, 0, 0), et=(1, 7, 0)),
            "verdict": "incompatible",
            "message": [
                "format 2.0, written by 1.0.0 with executorch 1.7.0",
                "reads formats 1.0-1.4",
                "executorch-reference-backend>=1.0.0",
            ],
        },
        {
            "name": "older_major",
            "blob": blob(fmt=(0, 9), backend=(0, 0, 5)),
            "fields": fields(fmt=(0, 9), backend=(0, 0, 5)),
            "verdict": "incompatible",
            "message": [
                "format 0.9, written by 0.0.5",
                "fix: re-export with executorch-reference-backend>=0.4.0",
            ],
        },
        {
            "name": "extended_header",
            "blob": with_records(record(0xABAB, b"\xab" * 5)),
            "fields": fields(length=72),
            "verdict": "compatible",
            "message": [],
        },
        {
            "name": "memory_limit",
            "blob": blob(memory_limit=4096),
            "fields": fields(length=72),
            "verdict": "compatible",
            "message": [],
        },
        {
            "name": "named_data_checksums",
            "blob": blob(memory_limit=1 << 40, named_data_checksums=(0xE3069283, 0, 0xFFFFFFFF)),
            "fields": fields(length=96),
            "verdict": "compatible",
            "message": [],
        },
        {
            "name": "unknown_required_extension",
            "blob": with_records(record(77, b"\1\2\3\4", EXTENSION_REQUIRED)),
            "decode_error": "header extension 77 at offset 40 is required and unknown to this runtime",
            "verdict": "incompatible",
            "message": [
                "header extension 77 at offset 40 is required and unknown to this runtime",
                "fix: re-export with executorch-reference-backend==0.4.0",
            ],
        },
        {
            "name": "extension_overruns_id",
            "blob": with_records(EXTENSION.pack(TAG_MEMORY_LIMIT, EXTENSION_REQUIRED, 16) + b"\0" * 8),
            "decode_error": "header extension 1 at offset 40 (16 bytes) runs into the backend id at offset 56",
            "verdict": "invalid",
            "message": ["header extension 1 at offset 40 (16 bytes) runs into the backend id at offset 56"],
        },
        {
            "name": "extension_cut_short",
            "blob": with_records(b"\0" * 4),
            "decode_error": "header extension at offset 40 runs into the backend id at offset 44",
            "verdict": "invalid",
            "message": ["header extension at offset 40 runs into the backend id at offset 44"],
        },
        {
            "name": "memory_limit_wrong_size",
            "blob": with_records(record(TAG_MEMORY_LIMIT, b"\0" * 4, EXTENSION_REQUIRED)),
            "decode_error": "header extension 1 (memory limit) at offset 40 has 4 bytes, not 8",
            "verdict": "invalid",
            "message": ["header extension 1 (memory limit) at offset 40 has 4 bytes, not 8"],
        },
        {
            "name": "named_data_checksums_ragged",
            "blob": with_records(record(TAG_NAMED_DATA_CHECKSUMS, b"\0" * 6, EXTENSION_REQUIRED)),
            "decode_error": "header extension 2 (named-data checksums) at offset 40 has 6 bytes, not a multiple of 4",
            "verdict": "invalid",
            "message": ["not a multiple of 4"],
        },
        {
            "name": "duplicate_extension",
            "blob": with_records(
                record(TAG_MEMORY_LIMIT, b"\0" * 8, 1) + record(TAG_MEMORY_LIMIT, b"\0" * 8, 1)
            ),
            "decode_error": "header extension 1 at offset 56 appears twice",
            "verdict": "invalid",
            "message": ["header extension 1 at offset 56 appears twice"],
        },
        {
            "name": "unknown_header_version",
            "blob": with_header_version(3),
            "decode_error": "header format 3, this runtime reads 1-2",
            "verdict": "incompatible",
            "message": [
                "header format 3, this runtime reads 1-2",
                "fix: re-export with executorch-reference-backend==0.4.0",
            ],
        },
        {
            "name": "format1_current",
            "blob": old,
            "fields": fields(header_format=1),
            "verdict": "compatible",
            "message": [],
        },
        {
            "name": "format1_older_minor",
            "blob": blob(fmt=(1, 1), backend=(0, 1, 0), header_format=1),
            "fields": fields(fmt=(1, 1), backend=(0, 1, 0), header_format=1),
            "verdict": "compatible, re-export recommended",
            "message": ["warning: old blob, runs", "format 1.1, written by 0.1.0"],
        },
        {
            "name": "format1_extended_header",
            "blob": with_extra_field(),
            "fields": fields(length=64, header_format=1),
            "verdict": "compatible",
            "message": [],
        },
        {
            "name": "format1_bad_checksum",
            "blob": bytes(old_bad_crc),
            "decode_error": "checksum mismatch",
            "verdict": "invalid",
            "message": ["checksum mismatch"],
        },
        {
            "name": "format1_crc32c_checksum",
            "blob": format1_with_crc32c(),
            "decode_error": "checksum mismatch",
            "verdict": "invalid",
            "message": ["checksum mismatch"],
        },
        {
            "name": "wrong_magic",
            "blob": b"XNNP" + good[4:],
            "decode_error": "wrong magic",
            "verdict": "invalid",
            "message": ["wrong magic 'XNNP'"],
        },
        {
            "name": "truncated_payload",
            "blob": good[:-3],
            "decode_error": "truncated",
            "verdict": "invalid",
            "message": ["truncated", "8-byte payload"],
        },
        {
            "name": "trailing_bytes",
            "blob": good + b"\0",
            "decode_error": "trailing bytes",
            "verdict": "invalid",
            "message": [
                "trailing bytes: header promises a 8-byte payload after a 56-byte header, blob has 65 bytes"
            ],
        },
        {
            "name": "truncated_header",
            "blob": good[:5],
            "decode_error": "truncated",
            "verdict": "invalid",
            "message": ["truncated: 5 bytes"],
        },
        {
            "name": "bad_checksum",
            "blob": bytes(bad_crc),
            "decode_error": "checksum mismatch",
            "verdict": "invalid",
            "message": ["checksum mismatch"],
        },
        {
            "name": "id_outside_header",
            "blob": with_id_span(48, 16),
            "decode_error": "backend id [offset 48, length 16] lies outside the 56-byte header",
            "verdict": "invalid",
            "message": ["backend id [offset 48, length 16] lies outside the 56-byte header"],
        },
        {
            "name": "id_not_utf8",
            "blob": with_id_bytes(b"\xffeferenceBackend"),
            "decode_error": "is not UTF-8",
            "verdict": "invalid",
            "message": ["backend id '\\xffeferenceBackend' is not UTF-8"],
        },
        {
            "name": "other_backend",
            "blob": blob(backend_id="XnnpackBackend"),
            "fields": fields(backend_id="XnnpackBackend"),
            "verdict": "invalid",
            "message": ["written for backend 'XnnpackBackend', not 'ReferenceBackend'"],
        },
    ]


def with_line(v: dict) -> dict:
    """The vector with the runtime's exact log line, checked against the fragments."""
    j = judge(v["blob"], RUNTIME)
    assert j.verdict == v["verdict"], (v["name"], j.message)
    assert all(part in j.message for part in v["message"]), (v["name"], j.message)
    if "fields" in v:
        h = decode(v["blob"])
        f = v["fields"]
        assert (h.header_length, h.header_format_version, list(h.blob_format), h.backend_id) == (
            f["header_length"],
            f["header_format_version"],
            f["blob_format"],
            f["backend_id"],
        ), v["name"]
    if "decode_error" in v:
        try:
            decode(v["blob"])
        except HeaderError as exc:
            assert v["decode_error"] in str(exc), (v["name"], exc)
        else:
            raise AssertionError(f"{v['name']} decodes")
    return dict(v, blob=v["blob"].hex(), line=j.message)


def main() -> None:
    out = [with_line(v) for v in vectors()]
    path = Path(__file__).with_name("blob_headers.json")
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {len(out)} vectors to {path}")


if __name__ == "__main__":
    main()
