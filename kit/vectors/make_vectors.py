"""Regenerates blob_headers.json, the test vectors of the contract header
that the kit's Python codec (backend_kit.header), its C++ header
(backend_kit/header.h, tests/kit/test_header_vectors.py), the reference
runtime (reference_backend/tests/test_blob_header.py) and the suite's
adapter (tests/conformance/test_contract_header.py) are all held to.

    python kit/vectors/make_vectors.py

Each vector is a whole blob (header + an 8-byte payload) with what a decoder
must make of it and what the runtime RUNTIME below (the reference runtime:
blob formats 1.0..1.3, version 0.3.0, built for executorch 1.5.1) must
decide, with its exact log line. Rerun after changing the header format or
the rules, and review the diff.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from backend_kit.header import Header, HeaderError, RuntimeVersions, checksum, decode, encode, judge

PAYLOAD = bytes(range(8))
ID = "ReferenceBackend"
#: The runtime whose verdicts the vectors record (the reference runtime 0.3.0).
RUNTIME = RuntimeVersions(
    backend_id=ID,
    distribution="executorch-reference-backend",
    backend_version=(0, 3, 0),
    executorch_version=(1, 5, 1),
    blob_format_major=1,
    blob_format_minor_min=0,
    blob_format_minor=3,
    current_format_since=(0, 3, 0),
)


def blob(fmt=(1, 3), backend=(0, 3, 0), et=(1, 5, 1), backend_id=ID) -> bytes:
    return encode(Header(backend_id, fmt, backend, et), PAYLOAD)


def rechecksum(raw: bytearray, header_length: int) -> bytes:
    crc = checksum(bytes(raw[:header_length]), bytes(raw[header_length:]))
    struct.pack_into("<I", raw, 32, crc)
    return bytes(raw)


def with_header_version(version: int) -> bytes:
    raw = bytearray(blob())
    struct.pack_into("<H", raw, 6, version)
    return rechecksum(raw, 56)


def with_extra_field() -> bytes:
    """A future header: 8 more fixed bytes before the id (offset 48, length 64)."""
    ident = ID.encode()
    raw = bytearray(blob())
    fixed = raw[:40]
    struct.pack_into("<HH", fixed, 36, 48, len(ident))
    struct.pack_into("<H", fixed, 4, 64)
    new = bytearray(fixed + b"\xAB" * 8 + ident + b"\0" * (64 - 48 - len(ident)) + PAYLOAD)
    return rechecksum(new, 64)


def with_id_bytes(ident: bytes) -> bytes:
    raw = bytearray(blob())
    raw[40 : 40 + len(ident)] = ident
    return rechecksum(raw, 56)


def with_id_span(offset: int, length: int) -> bytes:
    raw = bytearray(blob())
    struct.pack_into("<HH", raw, 36, offset, length)
    return rechecksum(raw, 56)


def fields(fmt=(1, 3), backend=(0, 3, 0), et=(1, 5, 1), length=56, backend_id=ID) -> dict:
    return {
        "header_length": length,
        "header_format_version": 1,
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
    return [
        {"name": "current", "blob": good, "fields": fields(), "verdict": "compatible", "message": []},
        {
            "name": "older_minor",
            "blob": blob(fmt=(1, 0), backend=(0, 1, 0)),
            "fields": fields(fmt=(1, 0), backend=(0, 1, 0)),
            "verdict": "compatible, re-export recommended",
            "message": ["warning: old blob, runs", "format 1.0, written by 0.1.0 with executorch 1.5.1",
                        "reads formats 1.0-1.3", "fix: re-export with executorch-reference-backend>=0.3.0"],
        },
        {
            "name": "previous_minor",
            "blob": blob(fmt=(1, 2), backend=(0, 2, 0)),
            "fields": fields(fmt=(1, 2), backend=(0, 2, 0)),
            "verdict": "compatible, re-export recommended",
            "message": ["warning: old blob, runs", "format 1.2, written by 0.2.0 with executorch 1.5.1",
                        "reads formats 1.0-1.3", "fix: re-export with executorch-reference-backend>=0.3.0"],
        },
        {
            "name": "newer_minor",
            "blob": blob(fmt=(1, 4), backend=(0, 4, 0)),
            "fields": fields(fmt=(1, 4), backend=(0, 4, 0)),
            "verdict": "incompatible",
            "message": ["incompatible blob", "format 1.4, written by 0.4.0",
                        "runtime 0.3.0 for executorch 1.5", "reads formats 1.0-1.3",
                        "fix: use a runtime from executorch-reference-backend>=0.4.0, or re-export with 0.3.0"],
        },
        {
            "name": "newer_major",
            "blob": blob(fmt=(2, 0), backend=(1, 0, 0), et=(1, 7, 0)),
            "fields": fields(fmt=(2, 0), backend=(1, 0, 0), et=(1, 7, 0)),
            "verdict": "incompatible",
            "message": ["format 2.0, written by 1.0.0 with executorch 1.7.0", "reads formats 1.0-1.3",
                        "executorch-reference-backend>=1.0.0"],
        },
        {
            "name": "older_major",
            "blob": blob(fmt=(0, 9), backend=(0, 0, 5)),
            "fields": fields(fmt=(0, 9), backend=(0, 0, 5)),
            "verdict": "incompatible",
            "message": ["format 0.9, written by 0.0.5", "fix: re-export with executorch-reference-backend>=0.3.0"],
        },
        {
            "name": "extended_header",
            "blob": with_extra_field(),
            "fields": fields(length=64),
            "verdict": "compatible",
            "message": [],
        },
        {
            "name": "unknown_header_version",
            "blob": with_header_version(2),
            "decode_error": "header format 2, this runtime reads 1-1",
            "verdict": "incompatible",
            "message": ["header format 2, this runtime reads 1-1", "fix: re-export with executorch-reference-backend==0.3.0"],
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
            "message": ["trailing bytes: header promises a 8-byte payload after a 56-byte header, blob has 65 bytes"],
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
