"""The verdict docs/blob-header.md's rules give for a golden blob on a released
reference runtime (``expected_verdict``), and the verdict a grid cell shows
(``observed_verdict``).

The released runtimes, as their sources say (versions.h and version.py at the
commit in matrix/grid.py BLOB_RUNTIMES):

- 0.1.0 reads blob formats 1.0-1.1, header format 1 only; 1.1 since 0.1.0.
- 0.2.0 reads blob formats 1.0-1.2, header formats 1-2; 1.2 since 0.2.0.
- 0.3.0 reads blob formats 1.0-1.3, header formats 1-2; 1.3 since 0.3.0.
- 0.4.0 reads blob formats 1.0-1.4, header formats 1-2; 1.4 since 0.4.0.

Rule 3 (header format out of range) is applied with each runtime's own range;
the later rules are the kit's ``judge`` with that runtime's versions.
"""

from __future__ import annotations

from pathlib import Path

from backend_kit.header import (
    COMPATIBLE,
    INCOMPATIBLE,
    INVALID,
    REEXPORT_RECOMMENDED,
    RuntimeVersions,
    claimed_header_format,
    judge,
)
from conformance.pte import read_pte

#: runtime version -> (newest header format it reads, RuntimeVersions for executorch 1.5).
RUNTIMES = {
    "0.1.0": (
        1,
        RuntimeVersions(
            "ReferenceBackend", "executorch-reference-backend", (0, 1, 0), (1, 5, 1), 1, 0, 1, (0, 1, 0)
        ),
    ),
    "0.2.0": (
        2,
        RuntimeVersions(
            "ReferenceBackend", "executorch-reference-backend", (0, 2, 0), (1, 5, 1), 1, 0, 2, (0, 2, 0)
        ),
    ),
    "0.3.0": (
        2,
        RuntimeVersions(
            "ReferenceBackend", "executorch-reference-backend", (0, 3, 0), (1, 5, 1), 1, 0, 3, (0, 3, 0)
        ),
    ),
    "0.4.0": (
        2,
        RuntimeVersions(
            "ReferenceBackend", "executorch-reference-backend", (0, 4, 0), (1, 5, 1), 1, 0, 4, (0, 4, 0)
        ),
    ),
}


def blob_of(program: Path) -> bytes:
    """The first delegate blob of a .pte (the goldens have one)."""
    return bytes(read_pte(program).delegates()[0].data)


def expected_verdict(program: Path | bytes, runtime: str) -> dict:
    """{"verdict", "rule"} for the program's blob on reference runtime ``runtime``."""
    blob = blob_of(program) if isinstance(program, Path) else program
    newest_header, versions = RUNTIMES[runtime]
    header_format = claimed_header_format(blob)
    if header_format is not None and not 1 <= header_format <= newest_header:
        return {
            "verdict": INCOMPATIBLE,
            "rule": f"3: header format {header_format}, runtime {runtime} reads 1-{newest_header}",
        }
    j = judge(blob, versions)
    return {"verdict": j.verdict, "rule": j.message or "12: compatible"}


def observed_verdict(cell: dict) -> str:
    """What the runtime decided, from the cell's status and its log lines."""
    log = " ".join(cell.get("log", []))
    if cell["status"] == "runs and matches":
        return REEXPORT_RECOMMENDED if "warning: old blob" in log else COMPATIBLE
    if cell["status"] == "refused":
        if (
            "incompatible blob" in log
            or "0x30" in cell.get("detail", "")
            or "0x:30" in cell.get("detail", "")
        ):
            return INCOMPATIBLE
        if "invalid blob" in log or "0x:23" in cell.get("detail", ""):
            return INVALID
    return cell["status"]
