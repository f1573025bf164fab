"""The runtime checks run on a real ssh target: an OpenSSH server on
127.0.0.1 with key authentication, the runner copied there and run through
the OpenSSH client; a lost connection fails the check with the target named."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest
import sshd as server
from check_outcomes import run_checks

# The full tier (CI; bash scripts/test.sh --full): builds the C++ runner; a real sshd
pytestmark = pytest.mark.full

RUNTIME = ["RT-1", "RT-2", "RT-3", "RT-4", "RT-5", "RT-6", "NDATA-3", "NDATA-4"]


@pytest.fixture
def ssh_options(sshd, monkeypatch):
    monkeypatch.setenv("EXECUTORCH_CONFORMANCE_SSH_OPTIONS", f"-F {sshd.client_config}")


def test_runtime_checks_pass_on_an_ssh_target(
    reference_context, reference_runner, sshd, ssh_options, tmp_path
):
    workspace = tmp_path / "target-workspace"
    ctx = reference_context
    ctx.use_target(f"{sshd.url}{workspace}", reference_runner)
    try:
        outcomes = run_checks(ctx, RUNTIME)
        assert {k: v[0] for k, v in outcomes.items()} == dict.fromkeys(RUNTIME, "passed"), outcomes
        info = ctx.target.info
    finally:
        ctx.use_target(None)
    assert info["transport"] == "ssh" and info["url"] == f"{sshd.url}{workspace}"
    assert info["uname"].startswith(os.uname().sysname) and os.uname().release in info["uname"]
    assert info["runner_version"].startswith("conformance_runner 0.3.0 (executorch 1.5")
    # Every file of the runner was copied over ssh; the hashes are those taken on the target.
    local = {
        p.relative_to(reference_runner.parent).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in [
            reference_runner,
            *reference_runner.parent.glob("lib/*"),
            *reference_runner.parent.glob("executorch/**/*"),
        ]
        if p.is_file()
    }
    remote_dir = Path(info["runner_dir"])
    assert remote_dir.parent == workspace
    on_target = {Path(x["path"]).relative_to(remote_dir).as_posix(): x["sha256"] for x in info["libraries"]}
    assert on_target == local
    assert "lib/libreference_backend_runtime.so" in on_target
    # The bundles are removed as the run goes (close removes the last one).
    assert [p.name for p in workspace.iterdir()] == [remote_dir.name]
    log = sshd.log.read_text(errors="replace")
    assert "Accepted publickey" in log


def test_a_lost_connection_fails_the_check_with_the_target_named(
    reference_context, reference_runner, tmp_path, monkeypatch
):
    why = server.unavailable()
    if why:
        pytest.skip(why)
    own = server.start(tmp_path / "sshd")  # stopped below: the session's server stays up
    monkeypatch.setenv("EXECUTORCH_CONFORMANCE_SSH_OPTIONS", f"-F {own.client_config}")
    ctx = reference_context
    try:
        ctx.use_target(f"{own.url}{tmp_path / 'ws'}", reference_runner)
        assert run_checks(ctx, ["RT-1"])["RT-1"][0] == "passed"
        own.stop()
        ctx.target.transport.disconnect()  # the master connection goes with the server
        started = time.monotonic()
        outcome, reason, _ = run_checks(ctx, ["RT-3"])["RT-3"]
        assert time.monotonic() - started < 30
    finally:
        own.stop()
        ctx.use_target(None)
    assert outcome == "error", reason
    assert f"lost the connection to {own.url}" in reason and "Connection refused" in reason, reason


@pytest.fixture
def small_disk(tmp_path):
    """A 24 MiB tmpfs (room for the runner, little else); skipped where mounting is not allowed."""
    import subprocess

    mount = tmp_path / "small"
    mount.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill (needs root): {proc.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_full_disk_on_the_target_fails_the_check_with_the_reason(
    reference_context, reference_runner, sshd, ssh_options, small_disk
):
    ctx = reference_context
    ctx.use_target(f"{sshd.url}{small_disk}/ws", reference_runner)
    try:
        assert run_checks(ctx, ["RT-1"])["RT-1"][0] == "passed"  # the runner fits
        with open(small_disk / "filler", "wb") as filler:  # then the disk fills up
            try:
                while True:
                    filler.write(b"\0" * (1 << 16))
                    filler.flush()
            except OSError:
                pass
        outcome, reason, _ = run_checks(ctx, ["RT-3"])["RT-3"]
        (small_disk / "filler").unlink()
        assert run_checks(ctx, ["RT-6"])["RT-6"][0] == "passed"  # room again: the run goes on
    finally:
        ctx.use_target(None)
    assert outcome == "error", reason
    assert f"the disk of {sshd.url}{small_disk}/ws is full while " in reason, reason
    assert "execute of sample 'mlp'" in reason, reason
    assert "No space left on device" in reason, reason
