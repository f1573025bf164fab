"""The suite's reader of the contract header (an adapter over backend_kit.header)
agrees with the kit's committed test vectors, which the kit's C++ header and
the reference runtime are held to as well."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conformance.inspection.blob_header import HeaderError, read_header, with_blob_format

VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "kit" / "vectors" / "blob_headers.json").read_text()
)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_suite_reader_matches_vector(vector):
    blob = bytes.fromhex(vector["blob"])
    if "decode_error" in vector:
        with pytest.raises(HeaderError, match=re.escape(vector["decode_error"])):
            read_header(blob)
        return
    h = read_header(blob)
    f = vector["fields"]
    assert (h.header_length, h.header_format_version) == (f["header_length"], f["header_format_version"])
    assert list(h.blob_format) == f["blob_format"]
    assert list(h.backend_version) == f["backend_version"]
    assert list(h.executorch_version) == f["executorch_version"]
    assert (h.payload_size, h.backend_id) == (f["payload_size"], f["backend_id"])


def test_forged_format_keeps_a_valid_checksum():
    current = next(v for v in VECTORS if v["name"] == "current")
    forged = with_blob_format(bytes.fromhex(current["blob"]), 2, 1)
    assert read_header(forged).blob_format == (2, 1)


def test_trailing_bytes_are_refused_by_the_suite():
    """Preprocess must emit exactly header + payload (contract C-BLOB-1)."""
    current = bytes.fromhex(next(v for v in VECTORS if v["name"] == "current")["blob"])
    with pytest.raises(
        HeaderError,
        match="trailing bytes: header promises a 8-byte payload after a 56-byte header, blob has 65 bytes",
    ):
        read_header(current + b"\0")
