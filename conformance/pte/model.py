"""Immutable description of a .pte file, as returned by ``read_pte``.

Every offset is an absolute byte offset in the file unless a field says
otherwise. Byte blobs are left out of ``repr`` to keep it readable.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class DataLocation(enum.IntEnum):
    """Where a delegate's processed blob lives (values as in program.fbs)."""

    INLINE = 0  #: in ``PteProgram.backend_delegate_data``
    SEGMENT = 1  #: in ``PteProgram.segments``


@dataclass(frozen=True)
class ExtendedHeader:
    """The header spliced in at byte offset 8, after the file identifier.

    ``segment_data_size`` is None when the header is too short to hold it
    (headers written before that field existed are 24 bytes long).
    """

    offset: int
    magic: bytes
    length: int
    program_size: int
    segment_base_offset: int
    segment_data_size: int | None


@dataclass(frozen=True)
class Segment:
    """One entry of ``Program.segments``.

    ``offset`` is relative to the segment base offset (as stored);
    ``file_offset`` is where the data starts in the file, or None when the
    file has no extended header (or a zero segment base offset) to locate it.
    """

    index: int
    offset: int
    size: int
    file_offset: int | None


@dataclass(frozen=True)
class SubsegmentOffsets:
    """Offsets of tensors inside the segment ``segment_index``."""

    segment_index: int
    offsets: tuple[int, ...]


@dataclass(frozen=True)
class NamedData:
    """A named blob: ``key`` refers to segment ``segment_index``."""

    key: str
    segment_index: int


@dataclass(frozen=True)
class Delegate:
    """One ``BackendDelegate`` of an execution plan, with its blob resolved.

    ``index`` points into ``backend_delegate_data`` (INLINE) or ``segments``
    (SEGMENT); ``data_offset`` is where ``data`` starts in the file.
    """

    backend_id: str
    compile_specs: tuple[tuple[str, bytes], ...]
    location: DataLocation
    index: int
    data_offset: int
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class ExecutionPlan:
    """A method of the program (``forward`` and friends)."""

    name: str
    num_inputs: int
    num_outputs: int
    operators: tuple[str, ...]
    delegates: tuple[Delegate, ...]


@dataclass(frozen=True)
class PteProgram:
    """The parts of a .pte file that backend conformance checks need.

    ``program_size`` is the size of the flatbuffer part (the whole file when
    there is no extended header).
    """

    file_size: int
    file_identifier: str
    schema_version: int
    extended_header: ExtendedHeader | None
    program_size: int
    execution_plans: tuple[ExecutionPlan, ...]
    backend_delegate_data: tuple[bytes, ...] = field(repr=False)
    segments: tuple[Segment, ...]
    constant_segment: SubsegmentOffsets | None
    mutable_data_segments: tuple[SubsegmentOffsets, ...]
    named_data: tuple[NamedData, ...]

    def plan(self, name: str) -> ExecutionPlan:
        """Return the execution plan called ``name``; KeyError if absent."""
        for plan in self.execution_plans:
            if plan.name == name:
                return plan
        raise KeyError(name)

    def delegates(self) -> tuple[Delegate, ...]:
        """All delegates of all plans, in file order."""
        return tuple(d for plan in self.execution_plans for d in plan.delegates)

    def named_data_index(self) -> dict[str, int]:
        """``named_data`` as a {key: segment index} dict."""
        return {entry.key: entry.segment_index for entry in self.named_data}
