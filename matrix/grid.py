"""The grid row of this environment's runtime: every committed golden program,
and every golden blob, run on the installed executorch release.

    python -m matrix.grid [--results DIR] [--build DIR]

Writes ``<results>/<release>/grid.json``. Each cell runs in its own child
process (matrix/grid_case.py), so a crash is recorded as ``crashed`` with the
signal's name instead of ending the run. Cells:

- ``programs``: tests/golden/<exported-with>/{reference,xnnpack}.pte on this
  release's runtime; reference programs with the reference runtime library
  built for this release (matrix/run_release.py build_runtime).
- ``blobs``: the reference backend's blobs of every released version
  (tests/golden/blobs/blobs.json) on the runtime library of every released version
  (BLOB_RUNTIMES, built from that version's sources), each with the verdict
  that docs/blob-header.md's rules give (``expected``) and whether the runtime
  agreed. Only where that version's library builds (executorch 1.5.x).

Cells run in batches (one child per runtime library); a crash or hang ends
only the case in progress and the batch resumes after it. Every cell keeps the
command that reproduces it alone.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from packaging.version import Version

from conformance.version_numbers import installed_version
from matrix.blob_verdicts import expected_verdict, observed_verdict
from matrix.cells import run_cases
from matrix.releases import release
from matrix.runtime_build import REPO, build_runtime, executorch_root, required, tool

GOLDEN = REPO / "tests" / "golden"
BLOB_GOLDEN = GOLDEN / "blobs"
PROGRAM_FILES = ("reference.pte", "xnnpack.pte")
#: Released reference runtime versions -> the commit of their sources (None: this checkout).
BLOB_RUNTIMES = {"0.1.0": "5c375b8a3a51", "0.2.0": "2d0eaa0352ab", "0.3.0": "3825d6ad8e6b", "0.4.0": None}
GRID_SCHEMA = 1


def golden_manifests() -> list[Path]:
    """tests/golden/<release>/manifest.json, oldest release first."""
    found = [p for p in GOLDEN.glob("*/manifest.json") if p.parent.name[:1].isdigit()]
    return sorted(found, key=lambda p: Version(p.parent.name))


def program_cells(library: Path | None, library_why: str) -> list[dict]:
    """Every golden program on this runtime (reference ones with ``library``)."""
    cells: list[dict] = []
    cases: list[tuple[int, Path, Path]] = []
    for manifest in golden_manifests():
        for name in PROGRAM_FILES:
            program = manifest.parent / name
            if not program.is_file():
                continue
            cell: dict = {"exported_with": manifest.parent.name, "program": name}
            if name == "reference.pte" and library is None:
                cell.update(
                    status="not run",
                    detail=f"no reference runtime library: {library_why}",
                    log=[],
                    command="",
                )
            else:
                cases.append((len(cells), program, manifest))
            cells.append(cell)
    for group_library, wanted in ((library, "reference.pte"), (None, "xnnpack.pte")):
        mine = [(i, p, m) for i, p, m in cases if p.name == wanted]
        for (i, _, _), result in zip(mine, run_cases([(p, m) for _, p, m in mine], group_library)):
            cells[i].update(result)
    for cell in cells:
        print(f"  {cell['exported_with']}/{cell['program']}: {cell['status']} ({cell['detail']})", flush=True)
    return cells


def build_released_runtime(version: str, commit: str, build: Path) -> tuple[Path | None, str]:
    """The reference runtime library of an earlier release, from its sources at ``commit``."""
    src = build / f"src-{version}"
    if not (src / "reference_backend" / "runtime" / "CMakeLists.txt").exists():
        src.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", commit, "reference_backend"], capture_output=True
        )
        if archive.returncode != 0:
            return None, f"git archive {commit} failed: {archive.stderr.decode().strip()[:200]}"
        tar = src / "src.tar"
        tar.write_bytes(archive.stdout)
        with tarfile.open(tar) as t:
            t.extractall(src, filter="data")
    root = executorch_root()
    out = build / f"runtime-{version}"
    for cmd in (
        [
            tool("cmake"),
            "-S",
            str(src / "reference_backend" / "runtime"),
            "-B",
            str(out),
            "-G",
            "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={tool('ninja')}",
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DCMAKE_PREFIX_PATH={root}",
            f"-Dexecutorch_DIR={root / 'lib' / 'cmake' / 'executorch'}",
        ],
        [tool("cmake"), "--build", str(out)],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
            return None, f"building reference runtime {version} ({commit}) failed: {' / '.join(tail)}"
    return out / "libreference_backend_runtime.so", f"built from {commit}'s reference_backend/runtime"


def blob_cells(version: str, current: Path | None, build: Path) -> tuple[list[dict], dict]:
    runtimes: dict[str, dict] = {}
    for rt, commit in BLOB_RUNTIMES.items():
        if commit is None:
            lib, how = current, "this checkout's reference_backend/runtime (the release's library)"
        else:
            lib, how = build_released_runtime(rt, commit, build)
        runtimes[rt] = {"library": str(lib) if lib else None, "how": how}
    cells: list[dict] = []
    manifest_path = BLOB_GOLDEN / "blobs.json"
    if not manifest_path.is_file():
        return [], runtimes
    entries = json.loads(manifest_path.read_text())["blobs"]
    for rt, info in runtimes.items():
        mine = []
        for entry in entries:
            program = REPO / entry["path"]
            cell = {
                "blob": entry["name"],
                "written_by": entry["written_by"],
                "runtime": rt,
                "expected": expected_verdict(program, rt),
            }
            if info["library"] is None:
                cell.update(status="not run", detail=info["how"], log=[], command="")
            else:
                mine.append((len(cells), program, REPO / entry["expected"]))
            cells.append(cell)
        if mine:
            lib = Path(info["library"])
            for (i, _, _), result in zip(mine, run_cases([(p, m) for _, p, m in mine], lib)):
                cells[i].update(result)
    for cell in cells:
        cell["observed"] = observed_verdict(cell)
        cell["agrees"] = cell["observed"] == cell["expected"]["verdict"]
        print(
            f"  blob {cell['blob']} on runtime {cell['runtime']}: {cell['observed']} "
            f"(expected {cell['expected']['verdict']})",
            flush=True,
        )
    return cells, runtimes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=REPO / "matrix" / "results")
    parser.add_argument("--build", type=Path, default=REPO / "build" / "matrix")
    args = parser.parse_args(argv)
    started = time.monotonic()
    version = str(Version(required("executorch")).base_version)
    rel = release(version)
    library, how = build_runtime(version, args.build / rel.executorch, rel.headers_from)
    print(f"executorch {version}: reference runtime library: {library or 'none'} ({how})", flush=True)
    grid = {
        "schema": GRID_SCHEMA,
        "runtime": {
            "executorch": installed_version("executorch"),
            "torch": installed_version("torch"),
            "python": sys.version.split()[0],
            "reference_library": str(library) if library else None,
            "reference_library_how": how,
        },
        "created": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "command": "python -m matrix.grid",
        "tox_env": f"et{version.replace('.', '')}",
        "programs": program_cells(library, how),
    }
    if Version(version) >= Version("1.5"):
        grid["blobs"], grid["blob_runtimes"] = blob_cells(
            version, library, args.build / rel.executorch / "blobs"
        )
    else:
        grid["blobs"], grid["blob_runtimes"] = [], {}
        grid["blobs_not_run"] = (
            "the released reference runtimes need executorch's CMake package "
            "(executorch::runtime), which wheels before 1.5 do not ship"
        )
    grid["seconds"] = round(time.monotonic() - started, 1)
    out = args.results / rel.executorch
    out.mkdir(parents=True, exist_ok=True)
    (out / "grid.json").write_text(json.dumps(grid, indent=1) + "\n")
    print(f"wrote {out / 'grid.json'} in {grid['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
