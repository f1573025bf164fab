"""What ``compat`` reads from a .pte, without ExecuTorch: the program's format (file identifier), the
operators left to ExecuTorch's kernels, and each delegate with its blob, contract header and format.

``read_program(path)`` raises CompatInputError, one line naming the file and what to do, for anything
that is not a readable .pte: a missing file, a directory, a FIFO or device (never opened, so nothing
blocks), an empty, truncated or foreign file.
"""

from __future__ import annotations

import dataclasses
import stat
import struct
from pathlib import Path

from conformance.compat.errors import CompatInputError
from conformance.input_files import kind_of
from conformance.inspection.blob_header import HeaderError, read_header
from conformance.pte import PteFormatError, read_pte


@dataclasses.dataclass(frozen=True)
class DelegateFacts:
    """One delegate: where it is (``plan[index]``), whose it is and what its blob says about itself."""

    plan: str
    index: int
    backend_id: str
    blob: bytes = dataclasses.field(repr=False)
    #: the contract header's fields, or None when the blob has none
    header_format: int | None
    blob_format: tuple[int, int] | None
    written_by: str | None
    exported_with: str | None
    #: why there is no contract header (None when there is one)
    no_header: str | None
    #: the blob's own format tag when it has no contract header (XNNPACK: 'XH00/XN01'), else None
    foreign_format: str | None

    @property
    def where(self) -> str:
        return f"{self.plan}[{self.index}] {self.backend_id}"


@dataclasses.dataclass(frozen=True)
class ProgramFacts:
    """A program as ``compat`` judges it."""

    path: str
    file_identifier: str
    #: operators of the program's plans run by ExecuTorch's kernels (not delegated), sorted
    operators: tuple[str, ...]
    delegates: tuple[DelegateFacts, ...]
    plans: tuple[str, ...]


def foreign_format(blob: bytes) -> str | None:
    """The format tag of a blob without a contract header, when its layout is known: XNNPACK's
    (``XH00`` header at offset 4, the flatbuffer it points to naming its schema, e.g. ``XH00/XN01``).
    None for any other blob: its format cannot be told, so nothing measured can stand for it."""
    if len(blob) < 24 or blob[4:6] != b"XH":
        return None
    # XNNPACK's header: magic at 4, u16 header length at 8, u32 flatbuffer offset at 10
    flatbuffer_offset = struct.unpack_from("<I", blob, 10)[0]
    ident = blob[flatbuffer_offset + 4 : flatbuffer_offset + 8] if flatbuffer_offset + 8 <= len(blob) else b""
    if not (blob[4:8].isascii() and ident.isascii() and len(ident) == 4 and ident.isalnum()):
        return None
    return f"{blob[4:8].decode()}/{ident.decode()}"


def _triple(t: tuple[int, int, int]) -> str:
    return ".".join(map(str, t))


def _delegate(plan: str, index: int, backend_id: str, blob: bytes) -> DelegateFacts:
    try:
        h = read_header(blob)
    except HeaderError as exc:
        return DelegateFacts(
            plan, index, backend_id, blob, None, None, None, None, str(exc), foreign_format(blob)
        )
    return DelegateFacts(
        plan,
        index,
        backend_id,
        blob,
        h.header_format_version,
        h.blob_format,
        _triple(h.backend_version),
        _triple(h.executorch_version),
        None,
        None,
    )


def read_program(path: str | Path) -> ProgramFacts:
    """The facts of the .pte at ``path``; CompatInputError for anything that is not one."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise CompatInputError(f"{path}: no such file; give the path of a .pte program") from None
    except OSError as exc:
        raise CompatInputError(
            f"{path}: cannot be read ({exc.strerror}); give the path of a .pte program"
        ) from None
    if stat.S_ISDIR(mode):
        raise CompatInputError(f"{path} is a directory, not a .pte file")
    if not stat.S_ISREG(mode):
        raise CompatInputError(
            f"{path} is {kind_of(mode)}, not a regular file; save the program to a file and give its path"
        )
    try:
        program = read_pte(path)
    except PteFormatError as exc:
        raise CompatInputError(
            f"{path} is not a readable .pte program: {exc}; a truncated or corrupted file must be exported again"
        ) from None
    except OSError as exc:
        raise CompatInputError(f"{path}: cannot be read ({exc})") from None
    delegates = tuple(
        _delegate(plan.name, i, d.backend_id, bytes(d.data))
        for plan in program.execution_plans
        for i, d in enumerate(plan.delegates)
    )
    operators = sorted({op for plan in program.execution_plans for op in plan.operators})
    return ProgramFacts(
        str(path),
        program.file_identifier,
        tuple(operators),
        delegates,
        tuple(p.name for p in program.execution_plans),
    )
