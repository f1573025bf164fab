"""Distils the release grid (matrix/results/<release>/grid.json) into ``measured.json``, ExecuTorch's
measured program compatibility as ``compat`` reads it (``conformance.compat.measured``). Run after a
grid run::

    python -m conformance.compat.distill [--results matrix/results] [--check]

``--check`` exits 1 when the committed file differs from what the results give.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from packaging.version import Version

from conformance.compat.measured import DATA, SCHEMA_VERSION
from conformance.compat.program import read_program

#: The status of a grid cell that loaded, ran and matched its recorded output.
RAN = "runs and matches"


def _program_path(cell: dict, repo: Path) -> Path:
    return repo / "tests" / "golden" / cell["exported_with"] / cell["program"]


def distill(results: Path, repo: Path) -> dict:
    """The content of ``measured.json`` from the grid files under ``results``."""
    runtimes: dict[str, dict] = {}
    for grid_path in sorted(results.glob("*/grid.json"), key=lambda p: Version(p.parent.name)):
        grid = json.loads(grid_path.read_text())
        release = str(Version(grid["runtime"]["executorch"]).base_version)
        identifiers: set[str] = set()
        operators: set[str] = set()
        exporters: set[str] = set()
        builtin: dict[str, dict[str, dict]] = {}
        for cell in grid["programs"]:
            if cell["status"] == "not run":
                continue
            program = read_program(_program_path(cell, repo))
            ran = cell["status"] == RAN
            if ran:
                identifiers.add(program.file_identifier)
                operators.update(program.operators)
                exporters.add(cell["exported_with"])
            if "--library" in cell.get("command", ""):
                continue  # a backend library of this project's was loaded: its rules are declared, not measured
            for d in program.delegates:
                if d.foreign_format is None:
                    continue
                entry = builtin.setdefault(d.backend_id, {}).setdefault(
                    d.foreign_format,
                    {"status": "runs" if ran else cell["status"], "detail": cell["detail"], "cells": 0},
                )
                if entry["status"] != ("runs" if ran else cell["status"]):
                    entry["status"], entry["detail"] = "mixed", "some measured programs ran, others did not"
                entry["cells"] += 1
        runtimes[release] = {
            "grid": str(grid_path.relative_to(repo)) if grid_path.is_relative_to(repo) else str(grid_path),
            "created": grid.get("created"),
            "program_identifiers": sorted(identifiers),
            "operators": sorted(operators),
            "exported_with": sorted(exporters, key=Version),
            "builtin_backends": builtin,
        }
    return {
        "schema": SCHEMA_VERSION,
        "source": "matrix/results/<release>/grid.json, distilled by python -m conformance.compat.distill",
        "runtimes": runtimes,
    }


def main(argv: list[str] | None = None) -> int:
    repo = Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=repo / "matrix" / "results")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if measured.json is not what the results give"
    )
    args = parser.parse_args(argv)
    text = json.dumps(distill(args.results, repo), indent=1, sort_keys=True) + "\n"
    if args.check:
        if DATA.read_text() != text:
            print(f"{DATA} is out of date: run python -m conformance.compat.distill", file=sys.stderr)
            return 1
        return 0
    DATA.write_text(text)
    print(f"wrote {DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
