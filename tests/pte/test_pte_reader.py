"""read_pte on real programs exported with the installed executorch."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.pte import DataLocation, PteProgram, read_pte
from conformance.pte._generated import program_generated as fb

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_every_file_has_forward_plan(pte_files) -> None:
    for name, path in pte_files.all().items():
        program = read_pte(path)
        assert program.file_identifier == "ET12", name
        assert program.file_size == path.stat().st_size
        assert [p.name for p in program.execution_plans] == ["forward"], name
        plan = program.plan("forward")
        assert plan.num_inputs == (2 if name == "no_segments" else 1), name
        assert plan.num_outputs == 1, name


def test_plain_program_has_operators_and_no_delegates(pte_files) -> None:
    program = read_pte(pte_files.plain)
    plan = program.plan("forward")
    assert plan.delegates == ()
    assert any("relu" in op for op in plan.operators), plan.operators
    assert all(op.startswith("aten::") for op in plan.operators)
    # Linear's weight and bias live in the constant segment (offsets[0] is a placeholder).
    assert program.constant_segment is not None
    assert len(program.constant_segment.offsets) == 3
    seg = program.segments[program.constant_segment.segment_index]
    assert seg.size >= (4 * 3 + 3) * 4


def test_xnnpack_delegate_in_segment(pte_files) -> None:
    program = read_pte(pte_files.xnnpack)
    (delegate,) = program.delegates()
    assert delegate.backend_id == "XnnpackBackend"
    assert delegate.location is DataLocation.SEGMENT
    assert all(isinstance(k, str) and isinstance(v, bytes) for k, v in delegate.compile_specs)
    seg = program.segments[delegate.index]
    assert delegate.data_offset == seg.file_offset
    assert len(delegate.data) == seg.size
    assert pte_files.xnnpack.read_bytes()[seg.file_offset : seg.file_offset + seg.size] == delegate.data
    # XNNPACK blob: 4 zero bytes, b"XH00" header magic, u16 header length, u32
    # offset of its own flatbuffer, whose identifier is b"XN01".
    blob = delegate.data
    assert blob[:4] == b"\0\0\0\0" and blob[4:8] == b"XH00"
    fb_offset = int.from_bytes(blob[10:14], "little")
    assert blob[fb_offset + 4 : fb_offset + 8] == b"XN01"


def test_xnnpack_inline_matches_segment_variant(pte_files) -> None:
    seg_program = read_pte(pte_files.xnnpack)
    inline_program = read_pte(pte_files.xnnpack_inline)
    (seg_delegate,) = seg_program.delegates()
    (inline_delegate,) = inline_program.delegates()
    assert inline_delegate.location is DataLocation.INLINE
    assert inline_delegate.data == inline_program.backend_delegate_data[inline_delegate.index]
    assert inline_delegate.data == seg_delegate.data
    assert inline_delegate.backend_id == seg_delegate.backend_id
    assert inline_delegate.compile_specs == seg_delegate.compile_specs
    raw = pte_files.xnnpack_inline.read_bytes()
    start = inline_delegate.data_offset
    assert start < inline_program.program_size  # inside the flatbuffer part
    assert raw[start : start + len(inline_delegate.data)] == inline_delegate.data
    # XNNPACK keeps weights as named data in segments in both variants.
    assert len(seg_program.named_data) == len(inline_program.named_data) >= 1
    assert seg_program.named_data_index().keys() == inline_program.named_data_index().keys()


@pytest.mark.parametrize("variant", ["demo", "demo_inline"])
def test_demo_backend_compile_specs_and_blob(pte_files, demo_backend, variant) -> None:
    program = read_pte(getattr(pte_files, variant))
    (delegate,) = program.delegates()
    assert delegate.backend_id == demo_backend.backend_id
    assert delegate.compile_specs == demo_backend.compile_specs
    assert delegate.data == demo_backend.blob
    expected = DataLocation.INLINE if variant == "demo_inline" else DataLocation.SEGMENT
    assert delegate.location is expected


def test_extended_header_fields(pte_files) -> None:
    for name in ("plain", "xnnpack", "xnnpack_inline", "demo", "demo_inline"):
        raw = getattr(pte_files, name).read_bytes()
        program = read_pte(raw)
        eh = program.extended_header
        assert eh is not None, name
        assert (eh.offset, eh.magic, eh.length) == (8, b"eh00", 32)
        assert program.program_size == eh.program_size < eh.segment_base_offset
        assert eh.segment_base_offset % 128 == 0  # default segment_alignment
        assert eh.segment_base_offset + eh.segment_data_size == len(raw)
        # The flatbuffer root offset skips the header; segment offsets are relative.
        assert int.from_bytes(raw[0:4], "little") >= 8 + eh.length
        for seg in program.segments:
            assert seg.file_offset == eh.segment_base_offset + seg.offset


def test_file_without_extended_header(pte_files) -> None:
    program = read_pte(pte_files.no_segments)
    assert program.extended_header is None
    assert program.program_size == program.file_size
    (delegate,) = program.delegates()
    assert delegate.backend_id == "XnnpackBackend"
    assert delegate.location is DataLocation.INLINE
    assert delegate.data[4:8] == b"XH00"
    # The exporter still lists an empty placeholder segment; it cannot be located.
    assert all(s.size == 0 and s.file_offset is None for s in program.segments)


def test_agrees_with_executorch_deserializer(pte_bytes) -> None:
    ser = pytest.importorskip("executorch.exir._serialize._program")
    for name, raw in pte_bytes.items():
        ours = read_pte(raw)
        theirs = ser.deserialize_pte_binary(raw).program  # segments restored inline
        assert ours.schema_version == theirs.version, name
        assert [p.name for p in ours.execution_plans] == [p.name for p in theirs.execution_plan]
        for our_plan, their_plan in zip(ours.execution_plans, theirs.execution_plan):
            assert our_plan.num_inputs == len(their_plan.inputs)
            assert our_plan.num_outputs == len(their_plan.outputs)
            for d, t in zip(our_plan.delegates, their_plan.delegates, strict=True):
                assert d.backend_id == t.id
                assert d.compile_specs == tuple((c.key, bytes(c.value)) for c in t.compile_specs)
                assert d.data == bytes(theirs.backend_delegate_data[t.processed.index].data)


def test_fast_byte_vectors_agree_with_generated_accessors(pte_bytes, demo_backend) -> None:
    """The reader slices [ubyte] vectors directly; the generated per-byte accessor must agree."""
    raw = pte_bytes["demo_inline"]
    root = fb.Program.GetRootAs(raw, 0)
    delegate = root.ExecutionPlan(0).Delegates(0)
    specs = [delegate.CompileSpecs(i) for i in range(delegate.CompileSpecsLength())]
    generated = tuple((s.Key().decode(), bytes(s.Value(j) for j in range(s.ValueLength()))) for s in specs)
    inline = root.BackendDelegateData(0)
    generated_blob = bytes(inline.Data(j) for j in range(inline.DataLength()))
    program = read_pte(raw)
    assert program.delegates()[0].compile_specs == generated == demo_backend.compile_specs
    assert program.backend_delegate_data[0] == generated_blob


def test_accepts_bytes_like_and_paths(pte_files) -> None:
    path = pte_files.demo
    raw = path.read_bytes()
    expected = read_pte(raw)
    for source in (bytearray(raw), memoryview(raw), str(path), path, os.fspath(path)):
        assert read_pte(source) == expected


def test_result_is_frozen(pte_files) -> None:
    program = read_pte(pte_files.demo)
    assert isinstance(program, PteProgram)
    with pytest.raises(dataclasses.FrozenInstanceError):
        program.schema_version = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        program.delegates()[0].backend_id = "x"  # type: ignore[misc]
    with pytest.raises(KeyError):
        program.plan("missing")


def test_reader_does_not_import_executorch_or_torch(pte_files) -> None:
    code = textwrap.dedent(
        f"""
        import sys
        from conformance.pte import read_pte, describe
        describe(read_pte({str(pte_files.xnnpack)!r}))
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("executorch", "torch"))
        assert not heavy, heavy
        """
    )
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO_ROOT, env=env)
