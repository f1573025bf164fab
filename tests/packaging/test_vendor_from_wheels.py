"""A vendor with only the two wheels: the suite's and the contract kit's, built from this checkout, installed
in a fresh virtual environment with the pinned torch and executorch from the package index, and used from
a directory outside the checkout, as the package's description (docs/package.md) says: ``new-backend``,
the printed next steps, the package's own tests, ``run --certify``, then the runner built from the
installed suite's sources and the runtime checks run through it (``--target local``). Nothing of the
checkout is on the environment's path. The long tier (about five minutes)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.full

ROOT = Path(__file__).resolve().parents[2]
BACKEND = "WheelVendorBackend"
PINS = ("torch==2.13.0", "executorch==1.5.1")


def _run(argv, cwd: Path, env: dict[str, str], timeout: float = 1800) -> str:
    proc = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, f"{' '.join(map(str, argv))}:\n{proc.stdout[-4000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def test_a_fresh_environment_with_the_two_wheels_certifies_a_generated_backend(tmp_path):
    wheels = tmp_path / "wheels"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    for source in (ROOT, ROOT / "kit"):
        pip_wheel = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
        _run([*pip_wheel, "-w", wheels, source], ROOT, clean)
    (suite,) = wheels.glob("executorch_conformance-*.whl")
    (kit,) = wheels.glob("executorch_backend_kit-*.whl")

    work = tmp_path / "vendor"
    work.mkdir()
    venv = tmp_path / "env"
    _run([sys.executable, "-m", "venv", venv], work, clean)
    bin_dir = venv / "bin"
    env = {**clean, "PATH": f"{bin_dir}{os.pathsep}{clean['PATH']}"}
    pip = [bin_dir / "python", "-m", "pip", "--disable-pip-version-check", "-q"]
    _run([*pip, "install", PINS[0]], work, env)
    _run([*pip, "install", *PINS, kit, suite], work, env)
    where = _run([bin_dir / "python", "-c", "import conformance; print(conformance.__file__)"], work, env)
    assert str(ROOT) not in where, where

    printed = _run([bin_dir / "executorch-conformance", "new-backend", BACKEND], work, env)
    steps = [line.strip() for line in printed.splitlines() if line.strip().startswith("pip install")]
    assert len(steps) == 2, printed
    package = work / "wheel-vendor-backend"
    for step in steps:  # the printed steps, as a vendor pastes them (pip: the environment's)
        _run([*pip, *shlex.split(step.split("&&")[0])[1:]], package, env)
    own = _run([bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider"], package, env)
    assert "5 passed" in own, own

    certify = [bin_dir / "executorch-conformance", "run", "--backend", BACKEND, "--certify"]
    out = _run([*certify, "--report-dir", work / "reports"], work, env)
    assert "verdict: CERTIFIED" in out, out[-3000:]

    site = Path(
        _run(
            [bin_dir / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work, env
        ).strip()
    )
    assert site != Path(sysconfig.get_paths()["purelib"])
    sources = _run([bin_dir / "python", "-m", "conformance.device_runner"], work, env).strip()
    build = work / "build" / "runner"
    _run(
        [
            bin_dir / "cmake",
            "-S",
            sources,
            "-B",
            build,
            "-G",
            "Ninja",
            # the generated package's own CMake package (kit 0.1.6), as its README says
            f"-DCMAKE_PREFIX_PATH={site / 'executorch'};{site / 'wheel_vendor_backend'}",
            f"-DRUNNER_BACKEND_PACKAGE={BACKEND}",
            f"-DRUNNER_BACKEND_TARGET={BACKEND}::Backend",
        ],
        work,
        env,
    )
    _run([bin_dir / "cmake", "--build", build], work, env)
    runner = build / "conformance_runner"
    local = [bin_dir / "executorch-conformance", "run", "--backend", BACKEND, "--checks", "RT"]
    _run([*local, "--target", "local", "--runner", runner, "--report-dir", work / "local"], work, env)
    report = json.loads((work / "local" / "report.json").read_text())
    assert report["target"]["transport"] == "local"
    outcomes = {r["id"]: r["outcome"] for r in report["results"]}
    assert outcomes["RT-3"] == "passed" and set(outcomes.values()) <= {"passed", "not_applicable"}, outcomes
