#!/usr/bin/env python3
"""Prove the 1.5.0 <-> 1.5.1 rows of the reference backend's ABI table by running them.

    python -m abi_checks.tools.prove_table [--work DIR] [--venv-only]

``--venv-only`` does step 1 and stops: it needs no .venv of this project, so CI makes the venv in the
background while bootstrap runs, and the proof then only builds and runs.

1. Makes DIR/venv-1.5.0 (default DIR: build/abi-work in the repository, or $ET_ABI_WORK) with
   ``abi_checks.tools.release_venv`` (torch==2.13.0 and executorch==1.5.0) unless it already has 1.5.0.
2. Builds the reference backend's runtime against that venv's executorch 1.5.0 wheel with CMake
   (``cmake -S reference_backend/runtime -B DIR/build-ref-1.5.0 -G Ninja
   -DCMAKE_PREFIX_PATH=<1.5.0 site-packages>/executorch``; ``executorch_DIR`` is passed too, so
   the build cannot pick up the executorch of the Python on PATH).
3. Runs ``abi_checks/tools/run_delegated.py`` (export with the reference partitioner, load the library,
   run through ``executorch.runtime``, compare with eager) twice:
   - the library built against 1.5.1 (installed in this project's .venv) inside the 1.5.0 venv;
   - the library built against 1.5.0 inside this project's .venv (executorch 1.5.1).
4. Prints one result line per direction, and what ``abi check`` predicted for it.

Exit code 0 when both directions ran and matched eager PyTorch.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from abi_checks.tools import release_venv

REPO = Path(__file__).resolve().parents[2]
MAIN_VENV = REPO / ".venv"
DEFAULT_WORK = release_venv.DEFAULT_WORK
LIB_NAME = "libreference_backend_runtime.so"
OLD_RELEASE = "1.5.0"


def site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages"))
    if not found:
        raise SystemExit(f"{venv} has no site-packages")
    return found[0]


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, **kw)


def build_against(venv: Path, build: Path) -> Path:
    et = site_packages(venv) / "executorch"
    cmake = shutil.which("cmake", path=str(MAIN_VENV / "bin")) or shutil.which("cmake")
    if cmake is None:
        raise SystemExit(
            "prove_table: cmake is not installed (bash scripts/bootstrap.sh installs it in .venv)"
        )
    ninja = shutil.which("ninja", path=str(MAIN_VENV / "bin")) or shutil.which("ninja")
    lib = build / LIB_NAME
    info = build / "build_info.json"
    # Always configure and build: incremental when the folder exists, so it follows source edits.
    run(
        [
            cmake,
            "-S",
            str(REPO / "reference_backend/runtime"),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={ninja}",
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DCMAKE_PREFIX_PATH={et}",
            f"-Dexecutorch_DIR={et / 'lib/cmake/executorch'}",
            f"-DBackendKit_DIR={REPO / 'kit/backend_kit/cmake'}",
        ],
        stdout=subprocess.DEVNULL,
    )
    run([cmake, "--build", str(build)], stdout=subprocess.DEVNULL)
    built = json.loads(info.read_text())["executorch_version"]
    if not built.startswith(OLD_RELEASE):
        raise SystemExit(f"{lib} was built against executorch {built}, not {OLD_RELEASE}")
    return lib


def run_in(venv: Path, lib: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "reference_backend/python"), str(REPO / "kit")])
    r = subprocess.run(
        [str(venv / "bin/python"), str(REPO / "abi_checks/tools/run_delegated.py"), str(lib)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(REPO),
    )
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    return {"ok": False, "error": f"no result (exit {r.returncode}): {r.stderr[-2000:]}"}


def predicted(lib: Path, release: str) -> str:
    from abi_checks.check import check_library

    v = check_library(lib, [release]).verdicts[0]
    return v.verdict + ("" if not v.reasons else f" ({'; '.join(v.reasons)})")


def describe(label: str, res: dict, prediction: str) -> str:
    libs = [Path(p) for p in res.get("mapped_executorch_libraries", [])]
    core = [str(p) for p in libs if p.name == "libexecutorch.so"]
    status = "OK" if res.get("ok") else "FAILED"
    detail = (
        f"registered, delegated program ran, max |diff| vs eager = {res.get('max_abs_diff'):.3g}"
        if res.get("ok")
        else res.get("error", "?")
    )
    running_root = Path(core[0]).parent if core else None
    foreign = [p.name for p in libs if p.name.startswith("libexecutorch") and p.parent != running_root]
    return (
        f"{label}: {status}: library built against executorch {res.get('built_against')}, process runs "
        f"executorch {res.get('running_executorch')}; {detail}; libexecutorch.so mapped from "
        f"{', '.join(core) or '?'} (libexecutorch* from elsewhere: {', '.join(foreign) or 'none'}); "
        f"abi check predicted: {prediction}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="where the 1.5.0 venv and build go")
    ap.add_argument("--venv-only", action="store_true", help="make the 1.5.0 venv and stop")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    venv_old = release_venv.ensure(OLD_RELEASE, args.work)
    if args.venv_only:
        print(f"prove_table: {venv_old} has executorch {OLD_RELEASE} ({time.monotonic() - t0:.0f} s)")
        return 0
    lib_new = site_packages(MAIN_VENV) / "reference_backend/lib" / LIB_NAME
    if not lib_new.exists():
        raise SystemExit(f"{lib_new} is missing: run scripts/bootstrap.sh first")
    lib_old = build_against(venv_old, args.work / f"build-ref-{OLD_RELEASE}")
    rows = [
        (
            "1.5.1-built library in the executorch 1.5.0 runtime",
            run_in(venv_old, lib_new),
            predicted(lib_new, OLD_RELEASE),
        ),
        (
            "1.5.0-built library in the executorch 1.5.1 runtime",
            run_in(MAIN_VENV, lib_old),
            predicted(lib_old, "1.5.1"),
        ),
    ]
    for label, res, pred in rows:
        print(describe(label, res, pred))
    print(f"({time.monotonic() - t0:.0f} s)")
    return 0 if all(r[1].get("ok") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
