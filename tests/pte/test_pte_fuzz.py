"""Property: any input either parses or raises PteFormatError, quickly.

Set PTE_FUZZ_EXAMPLES (default 500) to fuzz longer, e.g. 20000 before a release.
"""

from __future__ import annotations

import os
import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.pte import PteFormatError, PteProgram, describe, read_pte

NAMES = ["plain", "xnnpack", "xnnpack_inline", "demo", "demo_inline", "no_segments"]
FUZZ = settings(
    max_examples=int(os.environ.get("PTE_FUZZ_EXAMPLES", "500")),
    deadline=250,  # ms per example; a real parse of these files takes well under 5
    suppress_health_check=[HealthCheck.too_slow],
)


def parses_or_format_error(data: bytes) -> None:
    try:
        program = read_pte(data)
    except PteFormatError as err:
        assert f"offset {err.offset}" in str(err)
    else:
        assert isinstance(program, PteProgram)
        describe(program)  # whatever parses must also render


@FUZZ
@given(st.binary(max_size=512))
def test_arbitrary_bytes(data) -> None:
    parses_or_format_error(data)


@FUZZ
@given(
    root=st.integers(0, 2**32 - 1) | st.integers(8, 256),
    header=st.sampled_from([b"", b"eh00"]),
    header_len=st.integers(0, 2**32 - 1) | st.integers(20, 40),
    body=st.binary(max_size=512),
)
def test_plausible_prefix(root, header, header_len, body) -> None:
    """Valid root offset, identifier and (sometimes) header magic, then noise."""
    prefix = struct.pack("<I", root) + b"ET12"
    if header:
        prefix += header + struct.pack("<I", header_len)
    parses_or_format_error(prefix + body)


@FUZZ
@given(name=st.sampled_from(NAMES), position=st.integers(min_value=0), value=st.integers(0, 255))
def test_single_byte_mutation(pte_bytes, name, position, value) -> None:
    data = bytearray(pte_bytes[name])
    data[position % len(data)] = value
    parses_or_format_error(bytes(data))


@FUZZ
@given(name=st.sampled_from(NAMES), position=st.integers(min_value=0), value=st.integers(0, 2**32 - 1))
def test_word_mutation(pte_bytes, name, position, value) -> None:
    """Overwrite an aligned u32: offsets, lengths and vtable entries are u32-sized."""
    data = bytearray(pte_bytes[name])
    at = (position % (len(data) // 4)) * 4
    data[at : at + 4] = struct.pack("<I", value)
    parses_or_format_error(bytes(data))


@FUZZ
@given(name=st.sampled_from(NAMES), length=st.integers(min_value=0))
def test_truncation(pte_bytes, name, length) -> None:
    data = pte_bytes[name]
    parses_or_format_error(data[: length % (len(data) + 1)])
