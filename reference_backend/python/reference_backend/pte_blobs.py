"""Reads the delegate blobs and the named data out of a .pte file, and the
named data of a .ptd file, without importing executorch.

Uses the ``flatbuffers`` runtime's ``Table`` accessors with the field slots of
``program.fbs`` (Program, ExecutionPlan, BackendDelegate, ...), which have
been stable since 1.0 (and of ``flat_tensor.fbs`` for the .ptd). Only what
diagnostics need is read; the conformance
suite has the complete reader (conformance.pte).
"""

from __future__ import annotations

import dataclasses
import struct

import flatbuffers
from flatbuffers.table import Table

FILE_IDENTIFIER = b"ET12"
_EXTENDED_HEADER_MAGIC = b"eh00"
_INLINE, _SEGMENT = 0, 1


class PteError(ValueError):
    """The bytes are not a .pte this reader understands."""


@dataclasses.dataclass(frozen=True)
class DelegateBlob:
    """One delegate call site of one execution plan."""

    plan: str
    index: int
    backend_id: str
    compile_specs: tuple[tuple[str, bytes], ...]
    data: bytes


def _field(table: Table, slot: int) -> int:
    return table.Offset(4 + 2 * slot)


def _string(table: Table, slot: int) -> str:
    off = _field(table, slot)
    return table.String(off + table.Pos).decode("utf-8", "replace") if off else ""


def _vector(table: Table, slot: int) -> tuple[int, int]:
    """(start position, length) of a vector field, or (0, 0) if absent."""
    off = _field(table, slot)
    if not off:
        return 0, 0
    return table.Vector(off), table.VectorLen(off)


def _table_at(buf: bytes, vec_start: int, i: int) -> Table:
    pos = vec_start + 4 * i
    return Table(buf, pos + flatbuffers.encode.Get(flatbuffers.packer.uoffset, buf, pos))


def _subtable(table: Table, slot: int) -> Table | None:
    off = _field(table, slot)
    return Table(table.Bytes, table.Indirect(off + table.Pos)) if off else None


def _bytes(buf: bytes, start: int, length: int) -> bytes:
    if start + length > len(buf):
        raise PteError(f"vector at offset {start} of {length} bytes runs past the end ({len(buf)})")
    return bytes(buf[start : start + length])


def delegate_blobs(pte: bytes) -> list[DelegateBlob]:
    """Every delegate of every execution plan, with its processed bytes."""
    try:
        return _read(pte)
    except PteError:
        raise
    except (IndexError, struct.error, ValueError, RecursionError) as exc:
        raise PteError(f"malformed .pte flatbuffer ({type(exc).__name__}: {exc})") from None


def _read(pte: bytes) -> list[DelegateBlob]:
    if len(pte) < 8 or pte[4:8] != FILE_IDENTIFIER:
        raise PteError(f"not a .pte: file identifier {pte[4:8]!r} at offset 4, expected {FILE_IDENTIFIER!r}")
    segment_base = 0
    if pte[8:12] == _EXTENDED_HEADER_MAGIC:
        # The extended header sits outside the flatbuffer: fixed scalars.
        if len(pte) < 32:
            raise PteError("truncated extended header at offset 8")
        segment_base = struct.unpack_from("<Q", pte, 24)[0]
    root = flatbuffers.encode.Get(flatbuffers.packer.uoffset, pte, 0)
    if root >= len(pte):
        raise PteError(f"root table offset {root} at offset 0 lies past the end ({len(pte)})")
    program = Table(pte, root)
    inline_start, inline_len = _vector(program, 3)
    seg_start, seg_len = _vector(program, 4)
    plans_start, plans_len = _vector(program, 1)
    out = []
    for p in range(plans_len):
        plan = _table_at(pte, plans_start, p)
        name = _string(plan, 0)
        dstart, dlen = _vector(plan, 7)
        for d in range(dlen):
            delegate = _table_at(pte, dstart, d)
            specs = []
            sstart, slen = _vector(delegate, 2)
            for s in range(slen):
                spec = _table_at(pte, sstart, s)
                vstart, vlen = _vector(spec, 1)
                specs.append((_string(spec, 0), _bytes(pte, vstart, vlen)))
            ref = _subtable(delegate, 1)
            if ref is None:
                raise PteError(f"plan {name!r} delegate {d} has no processed data reference")
            location = ref.GetSlot(4, 0, flatbuffers.number_types.Int8Flags)
            index = ref.GetSlot(6, 0, flatbuffers.number_types.Uint32Flags)
            if location == _INLINE:
                if index >= inline_len:
                    raise PteError(f"plan {name!r} delegate {d}: inline data {index} of {inline_len}")
                vstart, vlen = _vector(_table_at(pte, inline_start, index), 0)
                data = _bytes(pte, vstart, vlen)
            elif location == _SEGMENT:
                if index >= seg_len:
                    raise PteError(f"plan {name!r} delegate {d}: segment {index} of {seg_len}")
                segment = _table_at(pte, seg_start, index)
                offset = segment.GetSlot(4, 0, flatbuffers.number_types.Uint64Flags)
                size = segment.GetSlot(6, 0, flatbuffers.number_types.Uint64Flags)
                data = _bytes(pte, segment_base + offset, size)
            else:
                raise PteError(f"plan {name!r} delegate {d}: unknown data location {location}")
            out.append(DelegateBlob(name, d, _string(delegate, 0), tuple(specs), data))
    return out


PTD_FILE_IDENTIFIER = b"FT01"
_PTD_HEADER_MAGIC = b"FH01"


def _named_sizes(
    buf: bytes, named_slot: int, segments_slot: int, root: Table, base: int, file_size: int | None = None
) -> dict[str, int]:
    """key -> byte size of the segment it names, for a table with named_data
    (key, segment_index) and segments (offset, size) vectors. ``file_size``:
    the size of the whole file when ``buf`` holds only its start."""
    file_size = len(buf) if file_size is None else file_size
    seg_start, seg_len = _vector(root, segments_slot)
    named_start, named_len = _vector(root, named_slot)
    out = {}
    for i in range(named_len):
        entry = _table_at(buf, named_start, i)
        key = _string(entry, 0)
        index = entry.GetSlot(6, 0, flatbuffers.number_types.Uint32Flags)
        if index >= seg_len:
            raise PteError(f"named data {key!r} names segment {index} of {seg_len}")
        segment = _table_at(buf, seg_start, index)
        offset = segment.GetSlot(4, 0, flatbuffers.number_types.Uint64Flags)
        size = segment.GetSlot(6, 0, flatbuffers.number_types.Uint64Flags)
        if base + offset + size > file_size:
            raise PteError(f"named data {key!r} [{base + offset}, +{size}) runs past the end ({file_size})")
        out[key] = size
    return out


def pte_named_data(pte: bytes) -> dict[str, int]:
    """Key -> size in bytes of each named blob stored inside a .pte."""
    try:
        if len(pte) < 8 or pte[4:8] != FILE_IDENTIFIER:
            raise PteError(
                f"not a .pte: file identifier {pte[4:8]!r} at offset 4, expected {FILE_IDENTIFIER!r}"
            )
        base = struct.unpack_from("<Q", pte, 24)[0] if pte[8:12] == _EXTENDED_HEADER_MAGIC else 0
        root = Table(pte, flatbuffers.encode.Get(flatbuffers.packer.uoffset, pte, 0))
        return _named_sizes(pte, 7, 4, root, base)  # Program.named_data, Program.segments
    except PteError:
        raise
    except (IndexError, struct.error, ValueError, RecursionError) as exc:
        raise PteError(f"malformed .pte flatbuffer ({type(exc).__name__}: {exc})") from None


def ptd_named_data(ptd: bytes, file_size: int | None = None) -> dict[str, int]:
    """Key -> size in bytes of each named blob of a .ptd (FlatTensor) file.
    ``ptd`` may be just the start of the file up to its first segment, with
    ``file_size`` the size of the whole file (see read_ptd_index)."""
    try:
        if len(ptd) < 40 or ptd[4:8] != PTD_FILE_IDENTIFIER or ptd[8:12] != _PTD_HEADER_MAGIC:
            raise PteError(
                f"not a .ptd: file identifier {ptd[4:8]!r} and header magic {ptd[8:12]!r}, "
                f"expected {PTD_FILE_IDENTIFIER!r} and {_PTD_HEADER_MAGIC!r}"
            )
        base = struct.unpack_from("<Q", ptd, 32)[0]  # header: magic, u32 length, u64 x4
        root = Table(ptd, flatbuffers.encode.Get(flatbuffers.packer.uoffset, ptd, 0))
        return _named_sizes(ptd, 2, 1, root, base, file_size)  # FlatTensor.named_data, .segments
    except PteError:
        raise
    except (IndexError, struct.error, ValueError, RecursionError) as exc:
        raise PteError(f"malformed .ptd flatbuffer ({type(exc).__name__}: {exc})") from None


def read_ptd_index(path) -> dict[str, int]:
    """``ptd_named_data`` of the .ptd file at ``path``, reading only its header
    and flatbuffer (not the data segments, which may be gigabytes)."""
    import os

    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(48)
        if len(head) < 40:
            raise PteError(f"{path}: {len(head)} bytes, too short for a .ptd header")
        base = struct.unpack_from("<Q", head, 32)[0]
        f.seek(0)
        start = f.read(base if 0 < base <= size else size)
    return ptd_named_data(start, size)
