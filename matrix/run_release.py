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
- 1.0.1, 1.1.0 and 1.2.0 ship no headers: the library is built against the
  headers of the nearest later release that ships them (Release.headers_from)
  and linked to the library of this wheel that exports register_backend.

Only the files in OWN_FILES are replaced; abi.json (matrix render) and
grid.json (matrix.grid) stay.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from packaging.version import Version

from conformance.run.run_command import Options, run_command
from conformance.version_numbers import installed_version
from matrix.cells import run_cases
from matrix.releases import release
from matrix.runtime_build import REPO, build_runtime, required

#: The files a run writes into matrix/results/<release>/ (and removes first).
OWN_FILES = (
    "expectations.toml",
    "runtime.txt",
    "output.txt",
    "report.json",
    "junit.xml",
    "badge.json",
    "badge.svg",
    "report.html",
    "skipped.txt",
)


def clear_own_files(out: Path) -> None:
    """Creates ``out`` and removes only what a run writes: abi.json (matrix render) and grid.json stay."""
    out.mkdir(parents=True, exist_ok=True)
    for name in OWN_FILES:
        (out / name).unlink(missing_ok=True)


def probe(version: str, library: Path) -> str | None:
    """None if the library runs this release's golden reference program correctly, else what happened."""
    golden = REPO / "tests" / "golden" / version
    if not (golden / "reference.pte").is_file():
        return None
    (cell,) = run_cases([(golden / "reference.pte", golden / "manifest.json")], library)
    if cell["status"] == "runs and matches":
        return None
    said = next((line for line in cell["log"] if "ReferenceBackend" in line), cell["detail"])
    return f"the library joins the registry but its golden program is {cell['status']}: {said[:160]}"


def _toml(text: str) -> str:
    """``text`` as a TOML basic string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def expectations(runtime_why: str | None, distribution_installed: bool, expected_failures=()) -> str:
    lines = []
    if expected_failures:
        lines.append("[expected_failures]")
        lines += [f'"{pattern}" = {_toml(reason)}' for pattern, reason in expected_failures]
    lines.append("[not_applicable]")
    if runtime_why:
        lines += [f'"{pattern}" = {_toml(runtime_why)}' for pattern in ("RT-*", "NDATA-3", "NDATA-4")]
    if not distribution_installed:
        why = (
            "the executorch-reference-backend distribution requires executorch>=1.5,<1.6; "
            "its AOT side runs from source in this release"
        )
        # PKG-5..7 inspect the installed distribution's runtime libraries and wheel
        lines += [f'"{pattern}" = {_toml(why)}' for pattern in ("PKG-1", "PKG-3", "PKG-5", "PKG-6", "PKG-7")]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=REPO / "matrix" / "results")
    parser.add_argument("--build", type=Path, default=REPO / "build" / "matrix")
    args = parser.parse_args()
    version = str(Version(required("executorch")).base_version)
    rel = release(version)
    out = args.results / rel.executorch
    clear_own_files(out)

    library, how = build_runtime(version, args.build / rel.executorch, rel.headers_from)
    if library and rel.headers_from:  # an ABI experiment: keep the library only if it measurably works
        failed = probe(version, library)
        if failed:
            library, how = None, f"{how}: {failed} (see grid.json)"
    runtime_why = None if library else how
    distribution = bool(installed_version("executorch-reference-backend"))
    (out / "expectations.toml").write_text(expectations(runtime_why, distribution, rel.expected_failures))
    (out / "runtime.txt").write_text(
        f"runtime library: {library} ({how})\n" if library else f"runtime: {runtime_why}\n"
    )

    env = dict(os.environ)
    if library:
        env["REFERENCE_BACKEND_LIBRARY"] = str(library)
    if not distribution:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(REPO / "reference_backend" / "python"), env.get("PYTHONPATH", "")]
        )
    cmd = run_command(
        "reference_backend.conformance:DESCRIPTOR", Options(expectations=str(out / "expectations.toml")), out
    )
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    (out / "output.txt").write_text(proc.stdout + proc.stderr)
    print(proc.stdout[-3000:])
    print(f"executorch {version}: exit {proc.returncode}; runtime: {how if library else runtime_why}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
