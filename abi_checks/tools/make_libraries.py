#!/usr/bin/env python3
"""Regenerate the shared libraries of one ExecuTorch release: abi_checks/libraries/<release>.json.

    python -m abi_checks.tools.make_libraries RELEASE [RELEASE ...] [--wheel-dir DIR]

For every shared library in ``executorch-RELEASE-*.whl`` (downloaded with ``pip download
--no-deps`` into --wheel-dir, default build/wheels, when it is not there): its path in the
wheel, SONAME, NEEDED, RUNPATH/RPATH, sha256, and the ExecuTorch symbols it exports (mangled).
Also which libraries ``import executorch.runtime`` loads (the Python runtime extension and what
it NEEDs, resolved the way the loader does) and which one carries the backend registry. This is
what ``abi check`` binds a library's imports against (abi_checks/loader.py), without the wheel.
Reads ELF files only (pyelftools); about 5 s per release with the wheel on disk.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import tempfile
from pathlib import Path

from abi_checks import LIBRARIES_DIR
from abi_checks.elf import is_executorch_symbol, read_dynamic
from abi_checks.tools.make_baseline import find_or_download_wheel, find_runtime_library, sha256, unpack

SCHEMA_VERSION = 1
ROOT = Path(__file__).resolve().parents[2]


def library_record(path: Path, root: Path) -> dict | None:
    try:
        info = read_dynamic(path)
    except ValueError:
        return None
    return {
        "path": path.relative_to(root).as_posix(),
        "soname": info.soname,
        "needed": info.needed,
        "runpath": info.runpath_entries,
        "rpath": info.rpath_entries,
        "sha256": sha256(path),
        "exports": sorted({s.name for s in info.exported() if is_executorch_symbol(s.name)}),
    }


def loaded_at_import(root: Path, extension: Path) -> list[str]:
    """The runtime extension and the libraries the loader maps for it, breadth-first, inside the wheel."""
    from abi_checks.loader import Package, load

    package = Package.on_disk(root, subject=extension)
    scope = load(package.subject(), package, preloaded=[])
    return [o.path for o in scope.order if o.where in ("subject", "package")]


def make_libraries(release: str, wheel: Path, work: Path) -> dict:
    pkg = unpack(wheel, work)
    root = pkg.parent
    libraries = [r for p in sorted(pkg.rglob("*.so*")) if p.is_file() and (r := library_record(p, root))]
    registry, _, why = find_runtime_library(pkg)
    ext = sorted(
        p
        for p in pkg.rglob("*.so")
        if p.parent.name == "pybindings" and p.name.startswith(("_portable_lib", "_C."))
    )
    return {
        "schema": SCHEMA_VERSION,
        "release": release,
        "wheel": wheel.name,
        "wheel_sha256": sha256(wheel),
        "generated": _dt.date.today().isoformat(),
        "generated_by": "python -m abi_checks.tools.make_libraries " + release,
        "registry_library": {"path": registry.relative_to(root).as_posix(), "why": why},
        "runtime_extension": ext[0].relative_to(root).as_posix() if ext else None,
        "loaded_at_import": loaded_at_import(root, ext[0]) if ext else [],
        "exports_filter": "mangled names in executorch::, torch::executor::, executorch_flatbuffer:: and et_pal_*, "
        "defined with default or protected visibility",
        "libraries": libraries,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("releases", nargs="+", metavar="RELEASE")
    ap.add_argument("--wheel-dir", type=Path, default=ROOT / "build/wheels")
    args = ap.parse_args(argv)
    for release in args.releases:
        wheel = find_or_download_wheel(release, args.wheel_dir)
        with tempfile.TemporaryDirectory(prefix=f"et-libs-{release}-") as tmp:
            doc = make_libraries(release, wheel, Path(tmp))
        out = LIBRARIES_DIR / f"{release}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=0) + "\n")
        print(
            f"{out.relative_to(ROOT)}: {len(doc['libraries'])} libraries; registry {doc['registry_library']['path']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
