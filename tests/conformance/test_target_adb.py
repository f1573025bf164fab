"""The adb transport's command lines, run against a test double of adb (no
device here): the exact argv it runs for each step, and the runtime checks
passing through it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from check_outcomes import run_checks

from conformance.targets import TargetError, open_transport

# The full tier (CI; bash scripts/test.sh --full): builds the C++ runner; runs through a target
pytestmark = pytest.mark.full

FAKE = Path(__file__).parent / "fake_tools"
SERIAL = "emulator-5554"


@pytest.fixture
def fake_adb(tmp_path, monkeypatch) -> Path:
    log = tmp_path / "adb-argv.jsonl"
    monkeypatch.setenv("PATH", f"{FAKE}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_ADB_LOG", str(log))
    monkeypatch.setenv("FAKE_ADB_SERIAL", SERIAL)
    return log


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_target_urls():
    assert open_transport("adb").adb("shell", "true") == ["adb", "shell", "true"]
    t = open_transport("adb://0123ABC/data/local/tmp/et")
    assert (
        t.adb("pull", "a", "b") == ["adb", "-s", "0123ABC", "pull", "a", "b"]
        and t.workspace == "/data/local/tmp/et"
    )
    assert open_transport("adb://0123ABC").workspace == "/data/local/tmp/executorch-conformance"
    for bad in ("adb:0123", "ssh://", "ssh://host:99999", "tcp://host", ""):
        with pytest.raises(TargetError, match="give local, ssh://"):
            open_transport(bad)


def test_runtime_checks_through_adb_push_shell_pull(reference_context, reference_runner, fake_adb, tmp_path):
    device = tmp_path / "device"
    workspace = f"{device}/ws"
    ctx = reference_context
    ctx.use_target(f"adb://{SERIAL}{workspace}", reference_runner)
    try:
        outcomes = run_checks(ctx, ["RT-1", "RT-3", "RT-5"])
        info = ctx.target.info
    finally:
        ctx.use_target(None)
    assert {k: v[0] for k, v in outcomes.items()} == dict.fromkeys(outcomes, "passed"), outcomes
    assert info["transport"] == "adb" and info["runner_version"].startswith("conformance_runner 0.3.0")
    argv = calls(fake_adb)
    assert all(a[:2] == ["-s", SERIAL] and a[2] in ("shell", "push", "pull") for a in argv), argv
    runner_dir = info["runner_dir"]
    assert re.fullmatch(re.escape(workspace) + r"/runner-[0-9a-f]{16}", runner_dir)
    # Deployment: is it there? no: mkdir every directory, push each directory's files, describe the target.
    assert argv[0] == ["-s", SERIAL, "shell", f"test -x {runner_dir}/conformance_runner && echo present"]
    aside = argv[1][3].split()[2]
    assert re.fullmatch(
        re.escape(runner_dir) + r"\.[0-9a-f]{8}", aside
    )  # copied aside, then moved into place
    assert argv[1] == [
        "-s",
        SERIAL,
        "shell",
        f"mkdir -p {aside} {aside}/executorch {aside}/executorch/lib {aside}/lib",
    ]
    pushes = [a for a in argv if a[2] == "push"]
    stage = Path(argv[2][3]).parent
    assert argv[2] == ["-s", SERIAL, "push", str(stage / "conformance_runner"), aside + "/"]
    pushed = {Path(f).relative_to(stage).as_posix() for a in pushes[:4] for f in a[3:-1]}
    assert {
        "conformance_runner",
        "lib/libreference_backend_runtime.so",
        "executorch/lib/libexecutorch.so",
        "executorch/version.py",
    } <= pushed
    assert argv[6] == [
        "-s",
        SERIAL,
        "shell",
        f"test -d {runner_dir} || mv {aside} {runner_dir}; rm -rf {aside}",
    ]
    assert argv[7][3].startswith("uname -a; echo '--'; uname -m; echo '--'; LD_LIBRARY_PATH=")
    # Each runtime task: mkdir, push the bundle, run the runner, pull the results.
    runs = [i for i, a in enumerate(argv) if a[2] == "shell" and "conformance_runner --timeout" in a[3]]
    samples = len(ctx.descriptor.sample_models)
    assert len(runs) == 1 + samples + 5  # describe, RT-3 (one execute per sample), RT-5 (five forgeries)
    previous = None
    for i in runs:
        command = argv[i][3]
        bundle = re.search(r"cd (\S+) \|\| exit 90", command).group(1)
        assert re.fullmatch(re.escape(workspace) + r"/bundle-\d+-[0-9a-f]+", bundle), bundle
        assert argv[i - 2] == ["-s", SERIAL, "shell", f"mkdir -p {bundle}"]
        assert argv[i - 1][2] == "push" and argv[i - 1][-1] == bundle + "/"
        assert "manifest.txt" in {Path(f).name for f in argv[i - 1][3:-1]}
        pattern = (
            r"(rm -rf (?P<previous>\S+); )?"
            + re.escape(
                f"cd {bundle} || exit 90; mkdir -p results; LD_LIBRARY_PATH={runner_dir}/lib:"
                f"{runner_dir}/executorch/lib {runner_dir}/conformance_runner --timeout "
            )
            + r"\d+"
            + re.escape(
                f" {bundle} > results/stdout.txt 2> results/log.txt & echo $! > pid; "
                'wait $!; s=$?; echo "runner-exit-status $s" > results/status.txt; '
                'echo "runner-exit-status $s"'
            )
        )
        found = re.fullmatch(pattern, command)
        assert found, command
        assert found["previous"] == previous  # the bundle before is removed on the target
        previous = bundle
        pull = argv[i + 1]
        assert pull[:4] == ["-s", SERIAL, "pull", f"{bundle}/results"] and pull[4].endswith("/results")


def test_a_device_that_is_not_attached_fails_with_adbs_message(reference_context, reference_runner, fake_adb):
    ctx = reference_context
    ctx.use_target("adb://not-attached/data/local/tmp/x", reference_runner)
    try:
        outcome, reason, _ = run_checks(ctx, ["RT-1"])["RT-1"]
    finally:
        ctx.use_target(None)
    assert outcome == "error"
    assert "adb://not-attached" in reason and "device 'not-attached' not found" in reason, reason


def test_a_device_that_stops_answering_times_the_check_out(
    reference_context, reference_runner, fake_adb, tmp_path, monkeypatch
):
    ctx = reference_context
    ctx.use_target(f"adb://{SERIAL}{tmp_path}/ws", reference_runner)
    saved = ctx.timeout
    try:
        assert run_checks(ctx, ["RT-1"])["RT-1"][0] == "passed"
        monkeypatch.setenv("FAKE_ADB_HANG", "1")
        ctx.timeout = 3
        started = time.monotonic()
        outcome, reason, _ = run_checks(ctx, ["RT-3"])["RT-3"]
        elapsed = time.monotonic() - started
    finally:
        ctx.timeout = saved
        ctx.use_target(None)
    assert outcome == "timed_out", reason
    pattern = rf"timed out after 3 s in execute of sample '\w+': adb://{SERIAL}\S* did not answer for 5\.75 s"
    assert re.match(pattern, reason), reason
    assert elapsed < 15
    # The runner of the bundle that hung is killed by its pid on the device.
    assert any(a[2] == "shell" and a[3].startswith("kill -9 $(cat ") for a in calls(fake_adb))


def test_no_adb_on_this_host_is_one_line(reference_runner, tmp_path):
    empty = tmp_path / "empty-path"
    empty.mkdir()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "run",
            "--backend",
            "ReferenceBackend",
            "--target",
            "adb",
            "--runner",
            str(reference_runner),
            "--report-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PATH=str(empty)),
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        "executorch-conformance run: adb is not installed on this host; it is needed to reach adb"
    )
