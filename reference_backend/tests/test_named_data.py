"""Named data: large constants leave the blob for ExecuTorch's named data, in
the .pte or in an external .ptd, and every way of getting the data wrong is an
error naming the key and the file (C++ log line and Python exception), never
a crash and never wrong numbers."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import flatbuffers
import pytest
import torch
from executorch.exir import to_edge_transform_and_lower
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.runtime import Runtime
from flatbuffers.table import Table
from forge import refresh_checksum, replace_blob
from models import MLP

import reference_backend
from backend_kit.header import decode, payload_of
from reference_backend import ProgramCompatibilityError, ReexportRecommendedWarning
from reference_backend.compile_specs import CompileSpecError, named_data_specs, parse_compile_specs
from reference_backend.pte_blobs import delegate_blobs, ptd_named_data, pte_named_data, read_ptd_index
from reference_backend.serialize import named_entries
from reference_backend.version import QUANT_MINOR

THRESHOLD = 1024  # MLP(16, 32, 8): both weights (2048 and 1024 bytes) named, the biases inline
TAG = "weights"


def export(model, example, specs, out: Path | None = None) -> bytes:
    edge = to_edge_transform_and_lower(
        torch.export.export(model, example), partitioner=[reference_backend.ReferencePartitioner(specs)]
    )
    program = edge.to_executorch()
    if out is not None:
        program.write_tensor_data_to_file(str(out))
    return program.buffer


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(0)
    model = MLP().eval()
    example = (torch.randn(4, 16),)
    with torch.no_grad():
        expected = model(*example)
    return model, example, expected


@pytest.fixture(scope="module")
def external(mlp, tmp_path_factory):
    """(pte bytes, pte path, ptd path): the MLP with its weights in weights.ptd."""
    model, example, _ = mlp
    out = tmp_path_factory.mktemp("external")
    pte = export(model, example, named_data_specs(THRESHOLD, TAG), out)
    (out / "model.pte").write_bytes(pte)
    return pte, out / "model.pte", out / f"{TAG}.ptd"


def table(pte: bytes):
    (blob,) = delegate_blobs(pte)
    return named_entries(payload_of(blob.data), decode(blob.data).blob_format[1])


def log_lines(text: str) -> list[str]:
    return [
        line[line.index("ReferenceBackend:") :] for line in text.splitlines() if "] ReferenceBackend:" in line
    ]


# --------------------------------------------------------------------------- compile specs


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        ([("named_data_threshold", b"1k")], "must be a byte count in ASCII digits"),
        ([("named_data_file", b"weights")], "needs 'named_data_threshold'"),
        ([("named_data_threshold", b"0"), ("named_data_file", b"../x")], "must be a file tag"),
        ([("named_data_threshold", b"0"), ("blob_format", b"1.1")], "named data needs blob format 1.2"),
        ([("named_data_thresold", b"0")], "unknown compile spec 'named_data_thresold'"),
    ],
)
def test_bad_named_data_specs_are_refused_at_partitioner_creation(specs, message):
    with pytest.raises(CompileSpecError, match=re.escape(message)):
        reference_backend.ReferencePartitioner([CompileSpec(k, v) for k, v in specs])


def test_default_is_no_named_data():
    options = parse_compile_specs([])
    assert options.named_data_threshold is None and options.named_data_file is None
    assert parse_compile_specs(named_data_specs(5, "w.ptd")).named_data_file_name == "w.ptd"
    assert parse_compile_specs(named_data_specs(5, "w")).named_data_file_name == "w.ptd"


# --------------------------------------------------------------------------- inside the .pte


def test_named_data_inside_the_pte_runs_and_keeps_the_blob_small(runtime, mlp):
    model, example, expected = mlp
    inline = export(model, example, [])
    named = export(model, example, named_data_specs(THRESHOLD))
    (inline_blob,) = delegate_blobs(inline)
    (named_blob,) = delegate_blobs(named)
    # Both weights (3072 bytes) left the blob; the table adds 48 bytes per key,
    # the header's named-data checksum record 16 (8-byte record header, 2 x u32).
    assert len(inline_blob.data) - len(named_blob.data) >= 3072 - 2 * 48 - 16
    entries = table(named)
    assert [e.key.split("@")[0] for e in entries] == ["fc1.weight", "fc2.weight"]
    assert all(e.file is None for e in entries)
    assert pte_named_data(named) == {e.key: e.nbytes for e in entries}
    assert table(inline) == []
    method = reference_backend.load_method(named)
    torch.testing.assert_close(method.execute(list(example))[0], expected, rtol=1e-5, atol=1e-6)


def test_keys_are_stable_across_exports_and_change_with_the_weights(mlp):
    model, example, _ = mlp
    first = [e.key for e in table(export(model, example, named_data_specs(THRESHOLD)))]
    again = [e.key for e in table(export(model, (torch.randn(2, 16),), named_data_specs(THRESHOLD)))]
    assert first == again  # another batch size, same weights: same keys, one shared .ptd
    other = MLP().eval()
    assert not set(first) & {e.key for e in table(export(other, example, named_data_specs(THRESHOLD)))}


# --------------------------------------------------------------------------- external .ptd


def test_external_ptd_holds_the_keys_the_blob_needs(external):
    pte, _, ptd = external
    entries = table(pte)
    assert {e.file for e in entries} == {f"{TAG}.ptd"}
    assert ptd_named_data(ptd.read_bytes()) == {e.key: e.nbytes for e in entries}
    assert read_ptd_index(ptd) == ptd_named_data(ptd.read_bytes())
    assert pte_named_data(pte) == {}


def test_runs_with_the_ptd_from_bytes_and_from_a_path(runtime, external, mlp):
    pte, pte_path, ptd = external
    _, example, expected = mlp
    for program in (pte, pte_path, str(pte_path)):
        method = reference_backend.load_method(program, data_path=ptd)
        torch.testing.assert_close(method.execute(list(example))[0], expected, rtol=1e-5, atol=1e-6)
    reference_backend.check_program(pte, data_path=ptd)  # no problem found


def test_without_the_ptd_the_error_names_the_key_and_the_file(runtime, external, capfd):
    pte, _, _ = external
    key = table(pte)[0].key
    capfd.readouterr()
    with pytest.raises(RuntimeError, match=re.escape("error: 0x:24")):  # InvalidExternalData
        Runtime.get().load_program(pte).load_method("forward")
    (line,) = log_lines(capfd.readouterr().err)
    assert f"named data '{key}'" in line and "external file 'weights.ptd' was not loaded" in line

    with pytest.raises(ProgramCompatibilityError) as info:
        reference_backend.load_method(pte)
    message = str(info.value)
    assert line in message  # the same facts as the log
    assert "data_path='weights.ptd'" in message and "1 more of its keys" in message
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(ProgramCompatibilityError, match="was not loaded"):
        reference_backend.check_program(pte)


def test_a_ptd_missing_a_key_is_named(runtime, external, tmp_path, capfd):
    pte, _, ptd = external
    _present, missing = (e.key for e in table(pte))
    forged = tmp_path / "weights.ptd"
    forged.write_bytes(ptd.read_bytes().replace(missing.encode(), missing[:-1].encode() + b"x", 1))
    capfd.readouterr()
    with pytest.raises(RuntimeError, match=re.escape("error: 0x:24")):
        Runtime.get().load_program(pte, data_path=forged).load_method("forward")
    (line,) = log_lines(capfd.readouterr().err)
    assert f"named data '{missing}'" in line
    assert (
        "is missing from the data loaded for 'weights.ptd': that file was not written with this program"
        in line
    )
    with pytest.raises(ProgramCompatibilityError) as info:
        reference_backend.load_method(pte, data_path=forged)
    assert line in str(info.value)


def _segment_size_offset(ptd: bytes, key: str) -> int:
    """File offset of the u64 size of the segment that ``key`` names in a .ptd."""

    def vector(t: Table, slot: int):
        off = t.Offset(4 + 2 * slot)
        return t.Vector(off), t.VectorLen(off)

    def at(start: int, i: int) -> Table:
        pos = start + 4 * i
        return Table(ptd, pos + flatbuffers.encode.Get(flatbuffers.packer.uoffset, ptd, pos))

    root = Table(ptd, flatbuffers.encode.Get(flatbuffers.packer.uoffset, ptd, 0))
    segments, _ = vector(root, 1)
    named, count = vector(root, 2)
    for i in range(count):
        entry = at(named, i)
        if entry.String(entry.Offset(4) + entry.Pos).decode() == key:
            index = entry.GetSlot(6, 0, flatbuffers.number_types.Uint32Flags)  # absent when 0
            segment = at(segments, index)
            return segment.Pos + segment.Offset(6)
    raise KeyError(key)


def test_a_ptd_entry_of_the_wrong_size_is_named(runtime, external, tmp_path, capfd):
    pte, _, ptd = external
    entry = table(pte)[0]
    raw = bytearray(ptd.read_bytes())
    struct.pack_into("<Q", raw, _segment_size_offset(bytes(raw), entry.key), entry.nbytes - 64)
    forged = tmp_path / "weights.ptd"
    forged.write_bytes(bytes(raw))
    assert ptd_named_data(bytes(raw))[entry.key] == entry.nbytes - 64
    capfd.readouterr()
    with pytest.raises(RuntimeError, match=re.escape("error: 0x:24")):
        Runtime.get().load_program(pte, data_path=forged).load_method("forward")
    (line,) = log_lines(capfd.readouterr().err)
    assert (
        f"named data '{entry.key}' has {entry.nbytes - 64} bytes, the blob expects {entry.nbytes}; "
        "'weights.ptd' was not written with this program: re-export both"
    ) in line
    with pytest.raises(ProgramCompatibilityError) as info:
        reference_backend.check_program(pte, data_path=forged)
    assert line in str(info.value)


def test_a_ptd_of_another_model_is_refused(runtime, external, tmp_path, capfd):
    pte, _, _ = external
    other = MLP().eval()
    export(other, (torch.randn(4, 16),), named_data_specs(THRESHOLD, TAG), tmp_path)
    capfd.readouterr()
    with pytest.raises(ProgramCompatibilityError) as info:
        reference_backend.load_method(pte, data_path=tmp_path / "weights.ptd")
    assert "external file 'weights.ptd' was not loaded" in str(info.value)
    assert "the data file given, weights.ptd, holds none of its keys" in str(info.value)


def test_two_programs_share_one_ptd(runtime, mlp, tmp_path):
    """Batch 4 and batch 2 of one model: same keys, same .ptd, both run from it."""
    model, example, expected = mlp
    small = (example[0][:2],)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = export(model, example, named_data_specs(THRESHOLD, TAG), tmp_path / "a")
    second = export(model, small, named_data_specs(THRESHOLD, TAG), tmp_path / "b")
    shared = tmp_path / "a" / "weights.ptd"
    assert shared.read_bytes() == (tmp_path / "b" / "weights.ptd").read_bytes()
    one = reference_backend.load_method(first, data_path=shared)
    two = reference_backend.load_method(second, data_path=shared)
    for _ in range(2):
        torch.testing.assert_close(one.execute(list(example))[0], expected, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(two.execute(list(small))[0], expected[:2], rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------- older formats, bad tables


def test_format_1_1_blobs_still_run(runtime, mlp):
    model, example, expected = mlp
    pte = export(model, example, [reference_backend.blob_format_spec(1, 1)])
    assert decode(delegate_blobs(pte)[0].data).blob_format == (1, 1)
    with pytest.warns(ReexportRecommendedWarning, match="format 1.1"):
        method = reference_backend.load_method(pte)
    torch.testing.assert_close(method.execute(list(example))[0], expected, rtol=1e-5, atol=1e-6)


def _payload_edit(edit):
    """An edit of the blob's payload (offsets relative to it, computed for the
    blob format its header names), checksum repaired."""

    def apply(raw: bytearray) -> bytearray:
        header = decode(bytes(raw))
        payload = bytearray(raw[header.header_length :])
        edit(payload, header.blob_format[1])
        raw[header.header_length :] = payload
        return refresh_checksum(raw)

    return apply


def _header_size(payload: bytes, minor: int) -> int:
    """Bytes before the value records: the counts (32 bytes up to 1.2), then
    num_params and a reserved word from 1.3 (docs/blob-header.md, "Payload")."""
    return 32 if minor < QUANT_MINOR else 40


def _table_start(payload: bytes, minor: int) -> int:
    values, inputs, outputs, ops, _ = struct.unpack_from("<IIIIQ", payload, 0)
    op_size, params = 24, 0  # u8 opcode, u8 n, u16 0, u32 out, u32 in[3], f32 alpha
    if minor >= QUANT_MINOR:
        op_size, params = 32, struct.unpack_from("<I", payload, 32)[0]  # + u32 param_offset, u32 param_count
    return _header_size(payload, minor) + 48 * values + 4 * (inputs + outputs) + op_size * ops + 4 * params


def _first_named_value(payload: bytes, minor: int) -> int:
    values, start = struct.unpack_from("<I", payload, 0)[0], _header_size(payload, minor)
    return next(start + 48 * i for i in range(values) if payload[start + 48 * i] == 2)


BAD_TABLES = {
    "empty key": (lambda p, m: struct.pack_into("<H", p, _table_start(p, m) + 8, 0), "has a key of 0 bytes"),
    "index out of range": (
        lambda p, m: struct.pack_into("<Q", p, _first_named_value(p, m) + 36, 7),
        "refers to entry 7 of a 2-entry named-data table",
    ),
    "size disagrees with shape": (
        lambda p, m: struct.pack_into("<Q", p, _table_start(p, m), 4),
        "its named data 'fc1.weight@",
    ),
    "control character in key": (
        lambda p, m: p.__setitem__(_table_start(p, m) + 16, 0x0A),
        "control character",
    ),
    "unknown value kind": (lambda p, m: p.__setitem__(_first_named_value(p, m), 3), "unknown kind 3"),
}


@pytest.mark.parametrize("name", list(BAD_TABLES))
def test_bad_named_data_table_is_an_invalid_blob(runtime, external, capfd, name):
    pte, _, ptd = external
    edit, fragment = BAD_TABLES[name]
    forged = replace_blob(pte, _payload_edit(edit))
    capfd.readouterr()
    with pytest.raises(RuntimeError, match=re.escape("error: 0x:23")):  # InvalidProgram
        Runtime.get().load_program(forged, data_path=ptd).load_method("forward")
    (line,) = log_lines(capfd.readouterr().err)
    assert "invalid blob" in line and fragment in line, line


def test_equal_weights_under_two_names_are_stored_once_and_near_misses_twice():
    """data_store_output keeps one buffer per distinct content: equal bytes under two keys share it, and
    buffers of one length and one start that differ later are both kept (the start only picks candidates)."""
    from reference_backend.named_data import data_store_output
    from reference_backend.serialize import NamedEntry

    base = torch.arange(256, dtype=torch.float32)
    late = base.clone()
    late[-1] = -1.0  # same length, same first 64 bytes, different last element
    rows = [
        (NamedEntry(key, "w.ptd", 1024), tensor, tensor.numpy().tobytes())
        for key, tensor in (("a", base), ("b", base.clone()), ("c", late))
    ]
    out = data_store_output(rows, TAG)
    entries = out.external_data[TAG]
    assert len(out.buffers) == 2
    assert entries["a"].buffer_index == entries["b"].buffer_index != entries["c"].buffer_index
    assert out.buffers[entries["c"].buffer_index] == late.numpy().tobytes()


def test_the_copy_preprocess_gets_shares_the_weights_and_not_the_graph(mlp):
    """ExecuTorch hands preprocess a copy of each delegated subgraph; the reference backend's copy shares
    the constant tensors (never written, so no model-sized copy) while its graph stays its own."""
    model, example, _ = mlp
    program = torch.export.export(model, example)
    copied = reference_backend.ReferenceBackend.copy_exported_program_for_preprocess(program, [])
    assert program.state_dict and all(copied.state_dict[k] is t for k, t in program.state_dict.items())
    assert copied.graph_module is not program.graph_module
    before = len(program.graph.nodes)
    copied.graph.erase_node(next(n for n in copied.graph.nodes if n.op == "output"))
    assert len(program.graph.nodes) == before
