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
    for cmd in (
        [
            cmake,
            "-S",
            str(BROKEN / "runtime"),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMAKE_PREFIX_PATH={_executorch_prefix()}",
            f"-DBackendKit_DIR={backend_kit.cmake_dir()}",
            "-DCMAKE_BUILD_TYPE=Release",
        ],
        [cmake, "--build", str(build)],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-4000:]}{proc.stderr[-4000:]}"
    return build


@pytest.fixture(scope="session")
def reference_runner() -> Path:
    """The conformance runner linked with the reference backend (ReferenceBackend::Backend), built once."""
    from runner_build import reference_runner as build

    return build()


@pytest.fixture(scope="session")
def misbehaving_runner(broken_runtime_dir) -> Path:
    """The conformance runner linked with the misbehaving test backend's shared library."""
    from runner_build import build_runner

    library = broken_runtime_dir / "libmisbehaving_backend.so"
    return build_runner("misbehaving", f"-DRUNNER_BACKEND_LIBRARIES={library}")


@pytest.fixture(scope="session")
def reference_context():
    """A Context of the reference backend, shared by the target tests (its lowerings are made once)."""
    from conformance.context import Context
    from conformance.descriptor import load_descriptor

    ctx = Context(load_descriptor("ReferenceBackend"), "ReferenceBackend", timeout=60)
    yield ctx
    ctx.close()


@pytest.fixture(scope="session")
def sshd(tmp_path_factory):
    """A real OpenSSH server on 127.0.0.1 (key authentication), stopped at the end of the session."""
    import sshd as server

    why = server.unavailable()
    if why:
        pytest.skip(why)
    running = server.start(tmp_path_factory.mktemp("sshd"))
    yield running
    running.stop()
