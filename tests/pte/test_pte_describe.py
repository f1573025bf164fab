"""describe(): the human-readable summary."""

from __future__ import annotations

from conformance.pte import describe, read_pte
from conformance.pte.describe import format_bytes


def test_describe_demo_program(pte_files, demo_backend) -> None:
    text = describe(read_pte(pte_files.demo))
    assert "ET12 program" in text
    assert "extended header at offset 8: eh00, 32 bytes" in text
    assert "forward: 1 inputs, 1 outputs, 1 delegates" in text
    assert f"delegate 0: {demo_backend.backend_id}" in text
    assert f"blob: {len(demo_backend.blob)} bytes in segment" in text
    assert "mode = 'fast' (4 bytes)" in text
    assert "threads = 04 00 00 00 (4 bytes) = 4 as u32 LE" in text
    assert "binary = 00 01 02" in text and "(256 bytes)" in text
    assert "empty = empty (0 bytes)" in text


def test_describe_xnnpack_program(pte_files) -> None:
    program = read_pte(pte_files.xnnpack)
    text = describe(program)
    assert "delegate 0: XnnpackBackend" in text
    assert "compile specs: none" in text
    assert f"segments: {len(program.segments)}" in text
    for entry in program.named_data:
        assert repr(entry.key) in text


def test_describe_without_extended_header(pte_files) -> None:
    text = describe(read_pte(pte_files.no_segments))
    assert "extended header: none" in text
    assert "in inline data 0" in text
    assert "(not locatable)" in text


def test_format_bytes() -> None:
    assert format_bytes(b"abc") == "'abc' (3 bytes)"
    assert format_bytes(b"") == "empty (0 bytes)"
    assert format_bytes(b"\x01") == "01 (1 byte) = 1 as u8 LE"
    assert format_bytes(bytes(40)).endswith("00 ... (40 bytes)")
    assert "\n" not in format_bytes(b"a\nb")
