"""Fixtures for testing the suite: the broken backends' runtimes, built once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def broken_runtime_dir(tmp_path_factory) -> Path:
    """The broken backends' runtime libraries, built with CMake against the installed executorch."""
    from runner_build import build_broken_runtime

    return build_broken_runtime(tmp_path_factory.mktemp("broken-runtime"))


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
