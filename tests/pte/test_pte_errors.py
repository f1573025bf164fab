"""Malformed input: every problem is a PteFormatError that names its byte offset."""

from __future__ import annotations

import random
import re
import struct
import time

import pytest

from conformance.pte import PteFormatError, read_pte
from conformance.pte._generated import program_generated as fb


def expect_error(data: bytes, pattern: str = "") -> PteFormatError:
    """read_pte(data) must raise PteFormatError matching ``pattern`` and naming its offset."""
    with pytest.raises(PteFormatError) as info:
        read_pte(data)
    err = info.value
    assert isinstance(err, ValueError)
    assert isinstance(err.offset, int) and err.offset >= 0
    assert f"offset {err.offset}" in str(err), str(err)
    if pattern:
        assert re.search(pattern, str(err)), str(err)
    return err


def patched(raw: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(raw)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


# -- prefix and extended header --------------------------------------------


@pytest.mark.parametrize("length", [0, 1, 4, 7])
def test_shorter_than_prefix(length) -> None:
    err = expect_error(b"\x10\0\0\0ET12"[:length], rf"truncated file: {length} bytes, need at least 8")
    assert err.offset == length


def test_wrong_identifier(pte_bytes) -> None:
    raw = bytearray(pte_bytes["xnnpack"])
    raw[4:8] = b"XXXX"
    err = expect_error(bytes(raw), r"wrong file identifier b'XXXX' at offset 4, expected b'ET12'")
    assert err.offset == 4


@pytest.mark.parametrize("seed", range(5))
def test_random_bytes(seed) -> None:
    rnd = random.Random(seed)
    expect_error(bytes(rnd.randrange(256) for _ in range(64 + seed * 100)), "file identifier")


@pytest.mark.parametrize("name", ["xnnpack", "plain", "no_segments"])
def test_truncated_real_files(pte_bytes, name) -> None:
    raw = pte_bytes[name]
    for length in sorted({0, 5, 8, 10, 12, 16, 20, 30, 39, 64, len(raw) // 2, len(raw) - 2}):
        expect_error(raw[:length])


def test_truncated_inside_extended_header(pte_bytes) -> None:
    raw = pte_bytes["xnnpack"]
    expect_error(raw[:14], r"truncated extended header.*offset 12")
    expect_error(raw[:30], r"extended header at offset 8 claims 32 bytes, but the file has only 30")


def test_extended_header_fields_out_of_range(pte_bytes) -> None:
    raw = pte_bytes["xnnpack"]
    size = len(raw)
    err = expect_error(patched(raw, 12, "<I", 20), r"extended header length 20 at offset 12")
    assert err.offset == 12
    err = expect_error(patched(raw, 16, "<Q", size + 1), rf"program_size {size + 1} at offset 16")
    assert err.offset == 16
    err = expect_error(patched(raw, 24, "<Q", size + 128), r"segment_base_offset .* at offset 24")
    assert err.offset == 24
    err = expect_error(patched(raw, 32, "<Q", 2**63), r"segment_data_size .* at offset 32")
    assert err.offset == 32


def test_short_legacy_header_is_accepted(pte_bytes) -> None:
    """A 24-byte header (no segment_data_size) parses; the field reads as None."""
    raw = patched(pte_bytes["xnnpack"], 12, "<I", 24)
    program = read_pte(raw)
    assert program.extended_header is not None
    assert program.extended_header.segment_data_size is None
    assert program.delegates()[0].data[4:8] == b"XH00"


# -- segments ----------------------------------------------------------------


def test_segment_offset_past_end_of_file(pte_bytes, locate) -> None:
    raw = pte_bytes["xnnpack"]
    base = read_pte(raw).extended_header.segment_base_offset
    seg = fb.Program.GetRootAs(raw, 0).Segments(2)  # segment 1 starts at 0, stored as a default
    at = locate(seg, fb.DataSegment.Offset)
    bad = patched(raw, at, "<Q", len(raw))
    err = expect_error(
        bad,
        rf"segment 2 \[offset {len(raw)}, size {seg.Size()}\] at file offset "
        rf"{base + len(raw)} extends past end of (file|segment data)",
    )
    assert err.offset == base + len(raw)


def test_segment_size_past_end_of_file(pte_bytes, locate) -> None:
    raw = pte_bytes["xnnpack"]
    seg = fb.Program.GetRootAs(raw, 0).Segments(1)
    at = locate(seg, fb.DataSegment.Size)
    expect_error(patched(raw, at, "<Q", 2**64 - 1), r"segment 1 .* extends past")


def test_a_table_whose_stated_size_ends_inside_its_last_field_is_read(pte_bytes, locate) -> None:
    """FlatBuffers' verifier holds a field to the buffer, not to the table size its vtable states:
    executorch 1.5.1 serialized with flatbuffers 25.2.10 writes segments whose stated size ends 4 bytes
    into their last field, and ExecuTorch's runtime loads them (so must the suite)."""
    raw = pte_bytes["xnnpack"]
    seg = fb.Program.GetRootAs(raw, 0).Segments(1)
    field = locate(seg, fb.DataSegment.Size)
    pos = seg._tab.Pos
    vtable = pos - struct.unpack_from("<i", raw, pos)[0]
    short = patched(raw, vtable + 2, "<H", field - pos + 4)  # the size ends 4 bytes into `size`
    assert struct.unpack_from("<H", short, vtable + 2)[0] < field - pos + 8
    assert read_pte(short).segments == read_pte(raw).segments


def test_a_field_past_the_end_of_the_data_is_refused(pte_bytes, locate) -> None:
    raw = pte_bytes["xnnpack"]
    seg = fb.Program.GetRootAs(raw, 0).Segments(1)
    pos = seg._tab.Pos
    vtable = pos - struct.unpack_from("<i", raw, pos)[0]
    slot = 4 + 2 * 1  # the vtable entry of DataSegment.size (field 1)
    assert len(raw) <= 0xFFFF  # a vtable entry (u16) can point past the end of this file
    expect_error(
        patched(raw, vtable + slot, "<H", len(raw)),
        r"segments\[1\]\.size: field at offset \d+ \(8 bytes\) lies outside",
    )


def test_delegate_segment_index_out_of_range(pte_bytes, locate) -> None:
    raw = pte_bytes["xnnpack"]
    ref = fb.Program.GetRootAs(raw, 0).ExecutionPlan(0).Delegates(0).Processed()
    at = locate(ref, fb.BackendDelegateDataReference.Index)
    err = expect_error(patched(raw, at, "<I", 99), r"refers to segment 99, but the program has 4")
    assert err.offset == ref._tab.Pos


def test_delegate_unknown_location(pte_bytes, locate) -> None:
    raw = pte_bytes["xnnpack"]
    ref = fb.Program.GetRootAs(raw, 0).ExecutionPlan(0).Delegates(0).Processed()
    at = locate(ref, fb.BackendDelegateDataReference.Location)
    expect_error(patched(raw, at, "<B", 7), r"unknown data location 7")


def test_segment_reference_without_extended_header(pte_bytes) -> None:
    """Dropping the header magic leaves segment references with nothing to resolve against."""
    raw = bytearray(pte_bytes["xnnpack"])
    raw[8:12] = b"\0\0\0\0"
    expect_error(bytes(raw), r"refers to segment \d+, but the file has no extended header")


def test_named_data_segment_out_of_range(pte_bytes, locate) -> None:
    raw = pte_bytes["xnnpack"]
    named = fb.Program.GetRootAs(raw, 0).NamedData(0)
    at = locate(named, fb.NamedData.SegmentIndex)
    err = expect_error(patched(raw, at, "<I", 1000), r"named_data\[0\] .* refers to segment 1000")
    assert err.offset == named._tab.Pos


# -- flatbuffer structure ------------------------------------------------------


def test_root_offset_out_of_range(pte_bytes) -> None:
    raw = pte_bytes["plain"]
    expect_error(patched(raw, 0, "<I", 2**31), r"program: table at offset \d+ out of range")
    expect_error(patched(raw, 0, "<I", 4), r"root table offset 4 at offset 0 points into the file prefix")


def test_vtable_out_of_range(pte_bytes) -> None:
    raw = pte_bytes["plain"]
    root = int.from_bytes(raw[0:4], "little")
    err = expect_error(patched(raw, root, "<i", 2**31 - 1), r"vtable at offset -\d+ out of range")
    assert err.offset == root  # where the bad soffset is stored
    expect_error(patched(raw, root, "<i", -(2**31)), r"vtable at offset \d+ out of range")


def test_huge_vector_length_fails_fast(pte_bytes, locate) -> None:
    raw = pte_bytes["xnnpack"]
    root = fb.Program.GetRootAs(raw, 0)
    field = locate(root, fb.Program.ExecutionPlanLength)
    vector = field + int.from_bytes(raw[field : field + 4], "little")
    start = time.perf_counter()
    err = expect_error(patched(raw, vector, "<I", 0xFFFFFFFF), r"claims 4294967295 elements")
    assert time.perf_counter() - start < 1.0
    assert err.offset == vector


def test_invalid_utf8_backend_id(pte_bytes) -> None:
    raw = bytearray(pte_bytes["xnnpack"])
    at = raw.index(b"XnnpackBackend")
    raw[at] = 0xFF
    err = expect_error(bytes(raw), r"delegates\[0\]\.id: invalid UTF-8")
    assert err.offset == at


def test_string_length_past_end(pte_bytes) -> None:
    raw = pte_bytes["xnnpack"]
    at = raw.index(b"XnnpackBackend") - 4  # the string's u32 length prefix
    expect_error(patched(raw, at, "<I", 10**6), r"delegates\[0\]\.id: vector at offset \d+ claims 1000000")


def test_errors_are_value_errors(pte_bytes) -> None:
    with pytest.raises(ValueError):  # noqa: PT011  the point: every reader error is a ValueError
        read_pte(b"")
