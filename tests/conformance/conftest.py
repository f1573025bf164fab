"""Fixtures for testing the suite: the broken backends' runtimes, built once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import backend_kit

sys.path.insert(0, str(Path(__file__).parent))

from suite_runner import BROKEN


def _executorch_prefix() -> str:
    import executorch

    return next(iter(executorch.__path__))


@pytest.fixture(scope="session")
def broken_runtime_dir(tmp_path_factory) -> Path:
    """The broken backends' runtime libraries, built with CMake against the installed executorch."""
    build = tmp_path_factory.mktemp("broken-runtime")
    bin_dir = Path(sys.executable).parent
    cmake = str(bin_dir / "cmake") if (bin_dir / "cmake").exists() else "cmake"
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    subprocess.run(
        [cmake, "-S", str(BROKEN / "runtime"), "-B", str(build), "-G", "Ninja",
         f"-DCMAKE_PREFIX_PATH={_executorch_prefix()}", f"-DBackendKit_DIR={backend_kit.cmake_dir()}",
         "-DCMAKE_BUILD_TYPE=Release"],
        check=True, capture_output=True, env=env,
    )
    subprocess.run([cmake, "--build", str(build)], check=True, capture_output=True, env=env)
    return build


