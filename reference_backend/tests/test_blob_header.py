"""The blob header codec in Python and the verdicts of the C++ runtime, both
checked against the committed vectors (vectors/blob_headers.json)."""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_backend
from reference_backend import version
from reference_backend.blob_header import BlobHeader, BlobHeaderError, decode_header, encode_blob

VECTORS = json.loads((Path(__file__).parent / "vectors" / "blob_headers.json").read_text())
IDS = [v["name"] for v in VECTORS]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_python_decoder_matches_vector(vector):
    blob = bytes.fromhex(vector["blob"])
    if "decode_error" in vector:
        with pytest.raises(BlobHeaderError, match=re.escape(vector["decode_error"])):
            decode_header(blob)
        return
    h = decode_header(blob)
    f = vector["fields"]
    assert h.header_length == f["header_length"]
    assert h.header_format_version == f["header_format_version"]
    assert list(h.blob_format) == f["blob_format"]
    assert list(h.backend_version) == f["backend_version"]
    assert list(h.executorch_version) == f["executorch_version"]
    assert h.payload_size == f["payload_size"]
    assert h.backend_id == f["backend_id"]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_cpp_runtime_judges_vector(runtime, vector):
    j = reference_backend.judge_blob(bytes.fromhex(vector["blob"]))
    assert j.verdict == vector["verdict"], j.message
    for part in vector["message"]:
        assert part in j.message
    assert bool(j.message) == bool(vector["message"])
    assert "\n" not in j.message  # one log line
    if "fields" in vector and j.verdict != "invalid":
        f = vector["fields"]
        assert j.fields["blob_format"] == "%d.%d" % tuple(f["blob_format"])
        assert j.fields["backend_version"] == "%d.%d.%d" % tuple(f["backend_version"])
        assert j.fields["executorch_version"] == "%d.%d.%d" % tuple(f["executorch_version"])
        assert int(j.fields["header_length"]) == f["header_length"]
        assert int(j.fields["payload_size"]) == f["payload_size"]
        assert j.fields["backend_id"] == f["backend_id"]


u16 = st.integers(0, 0xFFFF)


@settings(max_examples=200, deadline=None)
@given(
    fmt=st.tuples(u16, u16),
    backend=st.tuples(u16, u16, u16),
    et=st.tuples(u16, u16, u16),
    payload=st.binary(max_size=64),
)
def test_every_field_round_trips_python_to_cpp(runtime, fmt, backend, et, payload):
    blob = encode_blob(BlobHeader("ReferenceBackend", fmt, backend, et), payload)
    decoded = decode_header(blob)
    assert (decoded.blob_format, decoded.backend_version, decoded.executorch_version) == (fmt, backend, et)
    assert decoded.payload_size == len(payload)
    j = reference_backend.judge_blob(blob)
    assert j.verdict != "invalid", j.message
    assert j.fields["blob_format"] == "%d.%d" % fmt
    assert j.fields["backend_version"] == "%d.%d.%d" % backend
    assert j.fields["executorch_version"] == "%d.%d.%d" % et
    assert int(j.fields["payload_size"]) == len(payload)
    assert int(j.fields["checksum"]) == decoded.checksum


def test_checksum_is_zlib_crc32_of_header_with_zeroed_field_and_payload():
    blob = encode_blob(BlobHeader("ReferenceBackend", (1, 1), (0, 1, 0), (1, 5, 1)), b"payload")
    h = decode_header(blob)
    zeroed = blob[:32] + b"\0\0\0\0" + blob[36 : h.header_length]
    assert h.checksum == zlib.crc32(zeroed + b"payload")


def test_python_and_cpp_agree_on_versions_and_formats(runtime):
    info = reference_backend.runtime_info()
    assert info["backend_id"] == reference_backend.ReferenceBackend.__name__
    assert info["backend_version"] == version.__version__
    assert info["distribution"] == version.DISTRIBUTION
    assert (int(info["blob_format_major"]), int(info["blob_format_minor"])) == version.BLOB_FORMAT
    assert int(info["blob_format_minor_min"]) == version.BLOB_FORMAT_MINOR_MIN
    from executorch.version import __version__ as et

    assert et.startswith(info["executorch_version"])


def test_encoder_rejects_values_that_do_not_fit():
    with pytest.raises(BlobHeaderError, match="blob_format 70000"):
        encode_blob(BlobHeader("ReferenceBackend", (70000, 0), (0, 1, 0), (1, 5, 1)), b"")
    with pytest.raises(BlobHeaderError, match="1 to 255 bytes"):
        encode_blob(BlobHeader("", (1, 1), (0, 1, 0), (1, 5, 1)), b"")
