"""Fixtures for testing the suite: the broken backends' runtimes, built once."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def broken_runtime_dir(tmp_path_factory) -> Path:
    """The broken backends' runtime libraries, built with CMake against the installed executorch: once per
    test session, by the first xdist worker that needs them (the others wait on the lock and reuse them)."""
    from filelock import FileLock
    from runner_build import build_broken_runtime

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # a worker's directory: the session's is the one above it
        shared = shared.parent
    build, built = shared / "broken-runtime", shared / "broken-runtime.built"
    with FileLock(str(shared / "broken-runtime.lock")):
        if not built.exists():
            build_broken_runtime(build)
            built.touch()
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


@pytest.fixture(scope="session")
def reference_certify_run(tmp_path_factory, worker_id):
    """One ``executorch-conformance run --backend ReferenceBackend --certify`` for the whole test session,
    shared by every test that reads its report, output or files, and by every xdist worker (the first
    worker to ask runs it; the others wait on a lock and read what it wrote): (exit code, report or None,
    output, report directory)."""
    from filelock import FileLock
    from suite_runner import run_suite

    shared = (
        tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    )
    out = shared / "reference-certify-run"
    with FileLock(str(shared / "reference-certify-run.lock")):
        done = shared / "reference-certify-run.json"
        if not done.exists():
            out.mkdir(exist_ok=True)
            code, _report, output = run_suite(out, "ReferenceBackend", "--certify")
            done.write_text(json.dumps({"code": code, "output": output}))
    ran = json.loads(done.read_text())
    report_path = out / "report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    return ran["code"], report, ran["output"], out
