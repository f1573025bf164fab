"""``executorch-conformance release-grid``: every release's blobs on every release's runtime.

Prints the grid (rows: the release that wrote the blobs; columns: the runtime release), then each failing
cell with the programs that failed it, and writes the whole grid as JSON (``--json``). Exit status: 0 when
every cell passes, 1 when one fails, 2 when the grid cannot be run as asked (the message says why).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.version import SUITE_VERSION

if TYPE_CHECKING:  # the command imports them when it runs: the parser is built for every command
    from conformance.release_grid import cells as grid_cells
    from conformance.release_grid import programs

#: JSON format of ``--json``; a change that removes or renames a field bumps it.
GRID_FORMAT = 1
EXIT_FAILED, EXIT_USAGE = 1, 2


def cell_text(cell: grid_cells.Cell) -> str:
    """'runs 12', 'refused 12', 'runs 3, refused 9', or 'FAILS: 1 error'."""
    from conformance.release_grid.cells import REFUSED, RUNS

    counts = Counter(o.kind for o in cell.outcomes)
    if not cell.outcomes:
        return "nothing written"
    failed = cell.failures()
    if failed:
        kinds = Counter(o.kind for o in failed)
        return "FAILS: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    return ", ".join(f"{k} {counts[k]}" for k in (RUNS, REFUSED) if counts[k])


def table(labels: list[str], found: list[grid_cells.Cell]) -> str:
    """The grid as text: one row per writer, one column per runtime."""
    by = {(c.writer, c.runtime): cell_text(c) for c in found}
    head = ["blobs of \\ runtime", *labels]
    rows = [[w, *(by.get((w, r), "-") for r in labels)] for w in labels]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    return "\n".join(
        "  ".join(v.ljust(widths[i]) for i, v in enumerate(row)).rstrip() for row in [head, *rows]
    )


def failures_text(found: list[grid_cells.Cell]) -> str:
    lines = []
    for c in found:
        for o in c.failures():
            where = "its own runtime" if c.diagonal else f"runtime {c.runtime}"
            lines.append(f"- blobs of {c.writer} on {where}: {o.program}: {o.kind}: {o.detail}"[:700])
    return "\n".join(lines)


def as_json(spec: str, written: list[programs.Written], found: list[grid_cells.Cell]) -> dict:
    return {
        "format": GRID_FORMAT,
        "suite_version": SUITE_VERSION,
        "backend": spec,
        "releases": [
            {
                "label": w.release,
                "version": w.version,
                "backend_id": w.backend_id,
                "programs": [p.name for p in w.programs],
                "not_written": [{"program": n, "reason": r} for n, r in w.not_written],
            }
            for w in written
        ],
        "cells": [
            {
                "writer": c.writer,
                "runtime": c.runtime,
                "passed": c.passed,
                "outcomes": [{"program": o.program, "kind": o.kind, "detail": o.detail} for o in c.outcomes],
            }
            for c in found
        ],
        "passed": all(c.passed for c in found),
    }


def run_grid(args: argparse.Namespace) -> int:
    from conformance.release_grid import cells as grid_cells
    from conformance.release_grid import programs, releases

    try:
        given = releases.parse(args.release)
        written = [programs.write(r, args.backend, args.timeout, args.programs == "all") for r in given]
    except releases.ReleaseGridError as exc:
        print(f"executorch-conformance release-grid: {exc}", file=sys.stderr)
        return EXIT_USAGE
    ids = {w.backend_id for w in written}
    if len(ids) > 1:
        print(
            f"executorch-conformance release-grid: the releases describe different backends ({', '.join(sorted(ids))}); "
            "give releases of one backend",
            file=sys.stderr,
        )
        return EXIT_USAGE
    found: list[grid_cells.Cell] = []
    for r in given:
        found += grid_cells.run(r, args.backend, written, args.timeout)
    labels = [r.label for r in given]
    print(
        f"release grid of {args.backend}: blobs written by each release (rows) on each release's runtime (columns)"
    )
    print(table(labels, found))
    for w in written:
        for name, reason in w.not_written:
            print(f"note: release {w.release} did not write {name}: {reason}"[:500])
    failed = failures_text(found)
    if failed:
        print(
            "failing cells (a cell passes when each blob runs correctly or is refused with 0x30 and a log line "
            "naming the runtime's version; a release must run its own blobs):"
        )
        print(failed)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(as_json(args.backend, written, found), indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0 if all(c.passed for c in found) else EXIT_FAILED


def add_subcommand(sub) -> None:
    grid = sub.add_parser(
        "release-grid",
        help="run each release's blobs on each release's runtime (a backend's own release grid)",
        description=__doc__.splitlines()[0],
    )
    grid.add_argument(
        "--backend", required=True, help="entry point name or module:attribute of the descriptor"
    )
    grid.add_argument(
        "--release",
        action="append",
        default=[],
        metavar="LABEL=PYTHON",
        help="a release and the python of the environment it is installed in; repeat for each release, oldest first",
    )
    grid.add_argument("--json", metavar="FILE", help="write the grid as JSON here")
    grid.add_argument(
        "--programs",
        choices=("all", "samples"),
        default="all",
        help="what each release writes: its sample models and one program per declared operator (all, the "
        "default: every opcode a release writes is tried), or its sample models only (quicker)",
    )
    grid.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="the longest one lowering or execution may take",
    )
    grid.set_defaults(func=run_grid)
