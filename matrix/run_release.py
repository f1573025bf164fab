"""Runs the conformance suite against the reference backend in the current
environment (one ExecuTorch release) and writes matrix/results/<release>/.

    python -m matrix.run_release [--results DIR] [--build DIR]

What runs depends on the release (matrix/releases.py):
- AOT, serialization and blob checks everywhere; the reference backend's AOT
  side is pure Python and runs from source where its distribution (which
  requires executorch>=1.5,<1.6) cannot be installed.
- Runtime checks wherever a separately built backend library joins the
  wheel's backend registry: 1.5.x through lib/libexecutorch.so (the installed
  reference backend, or a CMake build against the wheel), 1.3.1 and 1.4.1 by
  building against the wheel's headers and linking the library that exports
  register_backend there. Elsewhere they are declared not applicable, with
  the reason, in a generated expectations file.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.version import Version

from matrix.releases import release

REPO = Path(__file__).resolve().parent.parent
REGISTRY_LIBRARY = "backends/qualcomm/libqnn_executorch_backend.so"


def executorch_root() -> Path:
    import executorch

    return Path(next(iter(executorch.__path__)))


def installed(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else (shutil.which(name) or name)


def build_runtime(version: str, build: Path) -> tuple[Path | None, str]:
    """(library, how) for this release, or (None, why not)."""
    root = executorch_root()
    if Version(version) >= Version("1.5"):
        if installed("executorch-reference-backend"):
            from reference_backend.runtime import library_path

            return library_path(), "the installed executorch-reference-backend wheel"
        defines = [f"-DCMAKE_PREFIX_PATH={root}", f"-Dexecutorch_DIR={root / 'lib' / 'cmake' / 'executorch'}"]
        how = "built with CMake against the wheel's executorch package"
    else:
        library = root / REGISTRY_LIBRARY
        header = root / "include" / "executorch" / "runtime" / "backend" / "interface.h"
        if not library.exists() or not header.exists():
            return None, "no separately built backend library can join this wheel's registry: " + (
                "the wheel ships no runtime/backend headers" if not header.exists() else f"no {REGISTRY_LIBRARY}"
            )
        defines = [
            f"-DREFERENCE_BACKEND_EXECUTORCH_LIBRARY={library}",
            f"-DREFERENCE_BACKEND_EXECUTORCH_INCLUDE={root / 'include'}",
            f"-DREFERENCE_BACKEND_EXECUTORCH_VERSION={version}",
        ]
        how = f"built with CMake against the wheel's include/, linked to {REGISTRY_LIBRARY}"
    for cmd in (
        [_tool("cmake"), "-S", str(REPO / "reference_backend" / "runtime"), "-B", str(build), "-G", "Ninja",
         f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}", "-DCMAKE_BUILD_TYPE=Release", *defines],
        [_tool("cmake"), "--build", str(build)],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
            return None, f"building the runtime library failed: {' / '.join(tail)}"
    return build / "libreference_backend_runtime.so", how


def expectations(runtime_why: str | None, distribution_installed: bool, expected_failures=()) -> str:
    lines = []
    if expected_failures:
        lines.append("[expected_failures]")
        lines += [f'"{pattern}" = "{reason}"' for pattern, reason in expected_failures]
    lines.append("[not_applicable]")
    if runtime_why:
        lines += [f'"RT-*" = "{runtime_why}"', f'"NDATA-3" = "{runtime_why}"', f'"NDATA-4" = "{runtime_why}"']
    if not distribution_installed:
        why = ("the executorch-reference-backend distribution requires executorch>=1.5,<1.6; "
               "its AOT side runs from source in this release")
        lines += [f'"PKG-1" = "{why}"', f'"PKG-3" = "{why}"']
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=REPO / "matrix" / "results")
    parser.add_argument("--build", type=Path, default=REPO / "build" / "matrix")
    args = parser.parse_args()
    version = str(Version(installed("executorch")).base_version)
    rel = release(version)
    out = args.results / rel.executorch
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)

    library, how = build_runtime(version, args.build / rel.executorch)
    runtime_why = rel.runtime_unavailable if library is None and rel.runtime_unavailable else (None if library else how)
    distribution = bool(installed("executorch-reference-backend"))
    (out / "expectations.toml").write_text(expectations(runtime_why, distribution, rel.expected_failures))
    (out / "runtime.txt").write_text(f"runtime library: {library} ({how})\n" if library else f"runtime: {runtime_why}\n")

    env = dict(os.environ)
    if library:
        env["REFERENCE_BACKEND_LIBRARY"] = str(library)
    if not distribution:
        env["PYTHONPATH"] = os.pathsep.join([str(REPO / "reference_backend" / "python"), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "conformance.cli", "run", "--backend", "reference_backend.conformance:DESCRIPTOR",
           "--expectations", str(out / "expectations.toml"), "--report-dir", str(out), "-n", "1"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    (out / "output.txt").write_text(proc.stdout + proc.stderr)
    print(proc.stdout[-3000:])
    print(f"executorch {version}: exit {proc.returncode}; runtime: {how if library else runtime_why}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
