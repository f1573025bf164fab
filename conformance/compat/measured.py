"""ExecuTorch's measured program compatibility: what each runtime release was seen to load and run in
the release grid (matrix/results/<release>/grid.json), distilled into ``measured.json`` beside this
file so that ``compat`` needs no checkout.

Per runtime release: the program file identifiers it loaded, the operators (left to its kernels) of
programs it ran, and for each backend whose runtime ships inside ExecuTorch (a grid cell run with no
backend library loaded: XNNPACK) the blob formats it ran. Only cells that ran and matched count as
"runs"; a refused or crashed cell records its detail. Regenerate after a grid run::

    python -m conformance.compat.measured [--results matrix/results] [--check]

``--check`` exits 1 when the committed file differs from what the results give.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from packaging.version import Version

from conformance.compat.errors import CompatInputError

DATA = Path(__file__).with_name("measured.json")
SCHEMA_VERSION = 1
RAN = "runs and matches"


@dataclasses.dataclass(frozen=True)
class MeasuredRuntime:
    """What one ExecuTorch runtime release was measured doing."""

    release: str
    grid: str
    program_identifiers: frozenset[str]
    operators: frozenset[str]
    exported_with: tuple[str, ...]
    #: backend id -> blob format -> {"status": "runs" | another grid status, "detail": ..., "cells": n}
    builtin_backends: dict[str, dict[str, dict]]


@dataclasses.dataclass(frozen=True)
class Measured:
    """Every measured runtime release, by release."""

    runtimes: dict[str, MeasuredRuntime]
    source: str

    def runtime(self, release: str) -> MeasuredRuntime | None:
        wanted = Version(release)
        for name, rt in self.runtimes.items():
            if Version(name) == wanted:
                return rt
        return None

    def builtin_backend_ids(self) -> set[str]:
        return {b for rt in self.runtimes.values() for b in rt.builtin_backends}

    def releases(self) -> list[str]:
        return sorted(self.runtimes, key=Version)


def load_measured(path: Path = DATA) -> Measured:
    """The measured data (``measured.json``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CompatInputError(f"measured data {path}: cannot be read ({exc}); reinstall executorch-conformance") from None
    if data.get("schema") != SCHEMA_VERSION:
        raise CompatInputError(f"measured data {path}: schema {data.get('schema')!r}, this suite reads {SCHEMA_VERSION}")
    runtimes = {
        release: MeasuredRuntime(
            release,
            entry["grid"],
            frozenset(entry["program_identifiers"]),
            frozenset(entry["operators"]),
            tuple(entry["exported_with"]),
            entry["builtin_backends"],
        )
        for release, entry in data["runtimes"].items()
    }
    return Measured(runtimes, data["source"])


def _program_path(cell: dict, repo: Path) -> Path:
    return repo / "tests" / "golden" / cell["exported_with"] / cell["program"]


def distill(results: Path, repo: Path) -> dict:
    """The content of ``measured.json`` from the grid files under ``results``."""
    from conformance.compat.program import read_program

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
                    d.foreign_format, {"status": "runs" if ran else cell["status"], "detail": cell["detail"], "cells": 0}
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
        "source": "matrix/results/<release>/grid.json, distilled by python -m conformance.compat.measured",
        "runtimes": runtimes,
    }


def main(argv: list[str] | None = None) -> int:
    repo = Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=repo / "matrix" / "results")
    parser.add_argument("--check", action="store_true", help="exit 1 if measured.json is not what the results give")
    args = parser.parse_args(argv)
    text = json.dumps(distill(args.results, repo), indent=1, sort_keys=True) + "\n"
    if args.check:
        if DATA.read_text() != text:
            print(f"{DATA} is out of date: run python -m conformance.compat.measured", file=sys.stderr)
            return 1
        return 0
    DATA.write_text(text)
    print(f"wrote {DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
