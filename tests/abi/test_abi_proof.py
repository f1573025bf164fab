"""The 1.5.0 <-> 1.5.1 rows of the reference backend's ABI table, proven by running them.

Needs a second venv with executorch 1.5.0 (torch 2.13.0); without it these tests skip and say
how to make it (``python -m abi_checks.tools.prove_table`` creates it, builds, and runs the same proof).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from abi_checks.tools import release_venv

REPO = Path(__file__).resolve().parents[2]
VENV_150 = release_venv.venv_path("1.5.0").resolve()
REFERENCE_LIB = (
    Path(sysconfig.get_paths()["purelib"]) / "reference_backend/lib/libreference_backend_runtime.so"
)
MAKE_VENV = (
    "python3.11 -m abi_checks.tools.release_venv 1.5.0 "
    "(or: python -m abi_checks.tools.prove_table, which also builds and runs the proof)"
)

pytestmark = [
    pytest.mark.skipif(
        not (VENV_150 / "bin/python").exists(),
        reason=f"no executorch 1.5.0 venv at {VENV_150}; create it with: {MAKE_VENV}",
    ),
    pytest.mark.skipif(
        not REFERENCE_LIB.exists(), reason=f"{REFERENCE_LIB} missing: run scripts/bootstrap.sh"
    ),
]


def run_delegated(python: Path, lib: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "reference_backend/python"), str(REPO / "kit")])
    r = subprocess.run(
        [str(python), str(REPO / "abi_checks/tools/run_delegated.py"), str(lib)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(REPO),
        timeout=300,
    )
    line = next((x for x in r.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line, f"no result (exit {r.returncode}):\n{r.stderr[-3000:]}"
    return json.loads(line[len("RESULT ") :])


def _core_lib(res: dict) -> Path:
    return next(Path(p) for p in res["mapped_executorch_libraries"] if Path(p).name == "libexecutorch.so")


def test_151_built_library_runs_in_150_runtime():
    res = run_delegated(VENV_150 / "bin/python", REFERENCE_LIB)
    assert res["ok"], res
    assert res["running_executorch"].startswith("1.5.0") and res["built_against"].startswith("1.5.1")
    assert res["delegates"] == ["ReferenceBackend"]
    # it bound to the 1.5.0 runtime already in the process, not to the 1.5.1 one its RUNPATH names
    assert _core_lib(res).is_relative_to(VENV_150)


@pytest.fixture(scope="module")
def library_built_against_150(tmp_path_factory) -> Path:
    sys.path.insert(0, str(REPO))
    from abi_checks.tools.prove_table import build_against

    if shutil.which("cmake", path=str(Path(sys.executable).parent)) is None and shutil.which("cmake") is None:
        pytest.skip("cmake is needed to build the reference runtime")
    return build_against(VENV_150, tmp_path_factory.mktemp("ref-1.5.0"))


def test_150_built_library_runs_in_151_runtime(library_built_against_150):
    res = run_delegated(Path(sys.executable), library_built_against_150)
    assert res["ok"], res
    assert res["running_executorch"].startswith("1.5.1") and res["built_against"].startswith("1.5.0")
    assert not _core_lib(res).is_relative_to(VENV_150)


def test_abi_check_predicts_the_proof(library_built_against_150):
    from abi_checks.check import check_library

    forward = check_library(REFERENCE_LIB, ["1.5.0"]).verdicts[0]
    backward = check_library(library_built_against_150, ["1.5.1"]).verdicts[0]
    assert forward.verdict == backward.verdict == "binary compatible", (forward, backward)
