"""The reference runtime's verdicts (its exported reference_backend_judge_blob,
the code init() runs) on the kit's committed vectors
(kit/vectors/blob_headers.json), against the kit's own judge for this
runtime's versions, and the kit's Python codec round-tripped through it. The
kit's two implementations are tested against the vectors' recorded verdicts
(for the runtime the vectors describe, reference runtime 0.4.0) in tests/kit/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_backend
from backend_kit.header import Header, RuntimeVersions, decode, encode, judge
from reference_backend import version

VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "kit" / "vectors" / "blob_headers.json").read_text()
)
IDS = [v["name"] for v in VECTORS]


def _triple(text: str) -> tuple[int, int, int]:
    return tuple(int(p) for p in text.split("."))


def this_runtime() -> RuntimeVersions:
    """The versions the loaded reference runtime reports, as the kit's RuntimeVersions."""
    info = reference_backend.runtime_info()
    since = (
        tuple(int(p) for p in info["current_format_since"].split("."))
        if "current_format_since" in info
        else None
    )
    return RuntimeVersions(
        backend_id=info["backend_id"],
        distribution=info["distribution"],
        backend_version=_triple(info["backend_version"]),
        executorch_version=_triple(info["executorch_version"]),
        blob_format_major=int(info["blob_format_major"]),
        blob_format_minor_min=int(info["blob_format_minor_min"]),
        blob_format_minor=int(info["blob_format_minor"]),
        current_format_since=since or _triple(info["backend_version"]),
    )


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_cpp_runtime_judges_vector(runtime, vector):
    blob = bytes.fromhex(vector["blob"])
    j = reference_backend.judge_blob(blob)
    expected = judge(blob, this_runtime())
    assert (j.verdict, j.message) == (expected.verdict, expected.message)
    assert "\n" not in j.message  # one log line
    if "fields" in vector and j.verdict != "invalid":
        f = vector["fields"]
        assert j.fields["blob_format"] == "{}.{}".format(*f["blob_format"])
        assert j.fields["backend_version"] == "{}.{}.{}".format(*f["backend_version"])
        assert j.fields["executorch_version"] == "{}.{}.{}".format(*f["executorch_version"])
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
    blob = encode(Header("ReferenceBackend", fmt, backend, et), payload)
    decoded = decode(blob)
    assert (decoded.blob_format, decoded.backend_version, decoded.executorch_version) == (fmt, backend, et)
    assert decoded.payload_size == len(payload)
    j = reference_backend.judge_blob(blob)
    assert j.verdict != "invalid", j.message
    assert j.fields["blob_format"] == "{}.{}".format(*fmt)
    assert j.fields["backend_version"] == "{}.{}.{}".format(*backend)
    assert j.fields["executorch_version"] == "{}.{}.{}".format(*et)
    assert int(j.fields["payload_size"]) == len(payload)
    assert int(j.fields["checksum"]) == decoded.checksum


def test_python_and_cpp_agree_on_versions_and_formats(runtime):
    info = reference_backend.runtime_info()
    assert info["backend_id"] == reference_backend.ReferenceBackend.__name__
    assert info["backend_version"] == version.__version__
    assert info["distribution"] == version.DISTRIBUTION
    assert (int(info["blob_format_major"]), int(info["blob_format_minor"])) == version.BLOB_FORMAT
    assert int(info["blob_format_minor_min"]) == version.BLOB_FORMAT_MINOR_MIN
    from executorch.version import __version__ as et

    assert et.startswith(info["executorch_version"])
