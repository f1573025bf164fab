"""Read ExecuTorch .pte files without importing executorch.

``read_pte`` returns a ``PteProgram`` or raises ``PteFormatError``; nothing
else escapes for malformed input, and the work done is bounded by the file
size. The flatbuffer part is read with bindings that flatc generated from the
schema in the executorch wheel (``scripts/generate_pte_schema.py``); fields
that a file (or the schema it was generated from) lacks read as empty, which
keeps the reader usable across releases that share the file identifier.

Segments are located through the extended header. As in the runtime, a file
without one may still *list* segments (exporters emit an empty placeholder);
that is only an error when something refers to a segment's data.
"""

from __future__ import annotations

import mmap
import os
from typing import Any

from . import header
from ._checked import FlatView
from ._generated import FILE_IDENTIFIER
from ._generated import program_generated as fb
from .errors import PteFormatError
from .model import (
    DataLocation,
    Delegate,
    ExecutionPlan,
    NamedData,
    PteProgram,
    Segment,
    SubsegmentOffsets,
)

__all__ = ["read_pte"]


def read_pte(data: bytes | bytearray | memoryview | str | os.PathLike[str]) -> PteProgram:
    """Parse a .pte file given as bytes or as a path.

    Raises ``PteFormatError`` (a ``ValueError``) naming the problem and its
    byte offset if the data is not a well-formed .pte file; ``OSError`` if a
    path cannot be read.

    A path is mapped, not read: only the pages the parse touches are loaded,
    so a multi-gigabyte file costs no more memory than its flatbuffer part.
    Then the data of delegates stored in segments is a ``memoryview`` into
    the mapping (which lives as long as the program holds it), not a copy.
    """
    if isinstance(data, (str, os.PathLike)):
        from conformance.input_files import open_regular

        with open_regular(data) as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                buf: Any = b""
            else:
                buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    else:
        buf = bytes(data)
    return _Reader(buf).program()


class _Reader:
    """One parse of one file; holds what later steps need."""

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.identifier = header.check_prefix(buf, FILE_IDENTIFIER)
        self.eh = header.read_extended_header(buf)
        self.program_size = self.eh.program_size if self.eh else len(buf)
        self.view = FlatView(buf, self.program_size)
        self.segments: tuple[Segment, ...] = ()

    def program(self) -> PteProgram:
        v = self.view
        root_offset = v.u32(0, "root table offset")
        if root_offset < header.PREFIX_SIZE:
            raise PteFormatError(
                f"root table offset {root_offset} at offset 0 points into the file prefix", 0
            )
        with v.guard("program", 0):
            root = fb.Program.GetRootAs(self.buf, 0)
        prog = v.table(root, "program")

        self.segments = self._segments(prog)
        inline = tuple(
            self._blob(d, fb.BackendDelegateInlineData.DataLength, f"backend_delegate_data[{i}].data")
            for i, d in enumerate(
                v.tables(
                    prog,
                    fb.Program.BackendDelegateDataLength,
                    fb.Program.BackendDelegateData,
                    "backend_delegate_data",
                )
            )
        )
        plans = tuple(
            self._plan(p, f"execution_plan[{i}]", inline)
            for i, p in enumerate(
                v.tables(prog, fb.Program.ExecutionPlanLength, fb.Program.ExecutionPlan, "execution_plan")
            )
        )
        constant = v.sub_table(prog, fb.Program.ConstantSegment, "constant_segment")
        mutable: tuple[SubsegmentOffsets, ...] = ()
        if hasattr(fb.Program, "MutableDataSegmentsLength"):  # absent from older schemas
            mutable = tuple(
                self._subsegments(m, f"mutable_data_segments[{i}]", min_used=1)
                for i, m in enumerate(
                    v.tables(
                        prog,
                        fb.Program.MutableDataSegmentsLength,
                        fb.Program.MutableDataSegments,
                        "mutable_data_segments",
                    )
                )
            )
        named: tuple[NamedData, ...] = ()
        if hasattr(fb.Program, "NamedDataLength"):  # absent from older schemas
            named = tuple(
                self._named(n, f"named_data[{i}]")
                for i, n in enumerate(
                    v.tables(prog, fb.Program.NamedDataLength, fb.Program.NamedData, "named_data")
                )
            )
        return PteProgram(
            file_size=len(self.buf),
            file_identifier=self.identifier,
            schema_version=v.scalar(prog, fb.Program.Version, 4, "program.version"),
            extended_header=self.eh,
            program_size=self.program_size,
            execution_plans=plans,
            backend_delegate_data=tuple(blob for _, blob in inline),
            segments=self.segments,
            # offsets[0] of the constant segment is a placeholder, so data needs >= 2.
            constant_segment=(
                None if constant is None else self._subsegments(constant, "constant_segment", min_used=2)
            ),
            mutable_data_segments=mutable,
            named_data=named,
        )

    # -- segments -------------------------------------------------------------

    def _segments(self, prog: Any) -> tuple[Segment, ...]:
        v = self.view
        base = self.eh.segment_base_offset if self.eh else 0
        limit, limit_name = len(self.buf), f"end of file (size {len(self.buf)})"
        if self.eh and self.eh.segment_data_size is not None and base + self.eh.segment_data_size < limit:
            limit = base + self.eh.segment_data_size
            limit_name = f"end of segment data (offset {limit}, from the extended header)"
        out = []
        for i, seg in enumerate(v.tables(prog, fb.Program.SegmentsLength, fb.Program.Segments, "segments")):
            offset = v.scalar(seg, fb.DataSegment.Offset, 8, f"segments[{i}].offset")
            size = v.scalar(seg, fb.DataSegment.Size, 8, f"segments[{i}].size")
            file_offset = None
            if base:
                file_offset = base + offset
                if file_offset + size > limit:
                    raise PteFormatError(
                        f"segment {i} [offset {offset}, size {size}] at file offset {file_offset} "
                        f"extends past {limit_name}",
                        file_offset,
                    )
            out.append(Segment(index=i, offset=offset, size=size, file_offset=file_offset))
        return tuple(out)

    def _segment(self, index: int, what: str, pos: int) -> Segment:
        """The segment ``index`` that ``what`` (a table at ``pos``) uses; it must have data."""
        if index >= len(self.segments):
            raise PteFormatError(
                f"{what} at offset {pos} refers to segment {index}, but the program has {len(self.segments)}",
                pos,
            )
        seg = self.segments[index]
        if seg.file_offset is None:
            raise PteFormatError(
                f"{what} at offset {pos} refers to segment {index}, but the file has no "
                f"extended header with a segment base offset at offset {header.EXTENDED_HEADER_OFFSET}",
                pos,
            )
        return seg

    def _subsegments(self, obj: Any, what: str, min_used: int) -> SubsegmentOffsets:
        """Read a SubsegmentOffsets; with ``min_used`` or more offsets its segment must exist."""
        v = self.view
        index = v.scalar(obj, fb.SubsegmentOffsets.SegmentIndex, 4, what + ".segment_index")
        offsets = v.scalars(
            obj, fb.SubsegmentOffsets.OffsetsLength, fb.SubsegmentOffsets.Offsets, 8, what + ".offsets"
        )
        if len(offsets) >= min_used:
            seg = self._segment(index, what, obj._tab.Pos)
            bad = next((o for o in offsets if o > seg.size), None)
            if bad is not None:
                raise PteFormatError(
                    f"{what} at offset {obj._tab.Pos} has offset {bad} past the end of "
                    f"segment {index} (size {seg.size})",
                    obj._tab.Pos,
                )
        return SubsegmentOffsets(segment_index=index, offsets=offsets)

    def _named(self, obj: Any, what: str) -> NamedData:
        v = self.view
        key = v.string(obj, fb.NamedData.Key, what + ".key") or ""
        index = v.scalar(obj, fb.NamedData.SegmentIndex, 4, what + ".segment_index")
        self._segment(index, f"{what} ({key!r})", obj._tab.Pos)
        return NamedData(key=key, segment_index=index)

    # -- plans and delegates --------------------------------------------------

    def _blob(self, obj: Any, length_accessor: Any, what: str) -> tuple[int, bytes]:
        """(file offset, bytes) of a ``[ubyte]`` field; empty if absent."""
        start, count = self.view.vector(obj, length_accessor, 1, what)
        return start, self.buf[start : start + count]

    def _plan(self, plan: Any, what: str, inline: tuple[tuple[int, bytes], ...]) -> ExecutionPlan:
        v = self.view
        operators = []
        for i, op in enumerate(
            v.tables(plan, fb.ExecutionPlan.OperatorsLength, fb.ExecutionPlan.Operators, what + ".operators")
        ):
            name = v.string(op, fb.Operator.Name, f"{what}.operators[{i}].name") or ""
            overload = v.string(op, fb.Operator.Overload, f"{what}.operators[{i}].overload") or ""
            operators.append(f"{name}.{overload}" if overload else name)
        delegates = tuple(
            self._delegate(d, f"{what}.delegates[{i}]", inline)
            for i, d in enumerate(
                v.tables(
                    plan, fb.ExecutionPlan.DelegatesLength, fb.ExecutionPlan.Delegates, what + ".delegates"
                )
            )
        )
        return ExecutionPlan(
            name=v.string(plan, fb.ExecutionPlan.Name, what + ".name") or "",
            num_inputs=v.vector(plan, fb.ExecutionPlan.InputsLength, 4, what + ".inputs")[1],
            num_outputs=v.vector(plan, fb.ExecutionPlan.OutputsLength, 4, what + ".outputs")[1],
            operators=tuple(operators),
            delegates=delegates,
        )

    def _delegate(self, d: Any, what: str, inline: tuple[tuple[int, bytes], ...]) -> Delegate:
        v = self.view
        specs = []
        for i, spec in enumerate(
            v.tables(
                d,
                fb.BackendDelegate.CompileSpecsLength,
                fb.BackendDelegate.CompileSpecs,
                what + ".compile_specs",
            )
        ):
            where = f"{what}.compile_specs[{i}]"
            key = v.string(spec, fb.CompileSpec.Key, where + ".key") or ""
            specs.append((key, self._blob(spec, fb.CompileSpec.ValueLength, where + ".value")[1]))

        ref = v.sub_table(d, fb.BackendDelegate.Processed, what + ".processed")
        if ref is None:
            raise PteFormatError(f"{what} at offset {d._tab.Pos} has no processed data reference", d._tab.Pos)
        pos = ref._tab.Pos
        raw_location = v.scalar(
            ref, fb.BackendDelegateDataReference.Location, 1, what + ".processed.location"
        )
        index = v.scalar(ref, fb.BackendDelegateDataReference.Index, 4, what + ".processed.index")
        try:
            location = DataLocation(raw_location)
        except ValueError:
            raise PteFormatError(
                f"{what}.processed at offset {pos} has unknown data location {raw_location}", pos
            ) from None
        if location is DataLocation.INLINE:
            if index >= len(inline):
                raise PteFormatError(
                    f"{what}.processed at offset {pos} refers to inline data {index}, "
                    f"but the program has {len(inline)}",
                    pos,
                )
            blob_offset, blob = inline[index]
        else:
            seg = self._segment(index, what + ".processed", pos)
            assert seg.file_offset is not None
            end = seg.file_offset + seg.size
            if isinstance(self.buf, mmap.mmap):  # no copy of what may be gigabytes
                blob_offset, blob = seg.file_offset, memoryview(self.buf)[seg.file_offset : end]
            else:
                blob_offset, blob = seg.file_offset, self.buf[seg.file_offset : end]
        return Delegate(
            backend_id=v.string(d, fb.BackendDelegate.Id, what + ".id") or "",
            compile_specs=tuple(specs),
            location=location,
            index=index,
            data_offset=blob_offset,
            data=blob,
        )
