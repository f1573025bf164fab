"""``run --target local`` certifies the reference backend through the C++
runner with the outcomes of the in-process run, and records the target; a bad
target URL, a missing runner or an unreachable host is one clear line (exit
code 2), never a traceback or a hang."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from pathlib import Path

import pytest
from suite_runner import results_by_id, run_suite

# The full tier (CI; bash scripts/test.sh --full): builds the C++ runner; certifies through it
pytestmark = pytest.mark.full

#: The outcomes of `run --backend ReferenceBackend` through the local runner: every check passes but PKG-7,
#: which needs the wheel file the backend was installed from, STATE-2 (the reference backend leaves mutated
#: buffers on CPU: n/a in-process too), and RT-9, which reads the vendor process's allocator counts and
#: says so.
THROUGH_RUNNER = {"PKG-7": "not_applicable", "STATE-2": "not_applicable"}
VENDOR_PROCESS_ONLY = ("RT-9",)


def test_the_local_runner_runs_the_runtime_checks_with_the_in_process_outcomes(tmp_path, reference_runner):
    code, report, output = run_suite(
        tmp_path, "ReferenceBackend", "--target", "local", "--runner", str(reference_runner)
    )
    assert report is not None, output
    outcomes = {r["id"]: r["outcome"] for r in report["results"]}
    expected = {**THROUGH_RUNNER, **dict.fromkeys(VENDOR_PROCESS_ONLY, "not_applicable")}
    assert outcomes == {i: expected.get(i, "passed") for i in outcomes}, output
    for check_id in VENDOR_PROCESS_ONLY:
        assert "--target" in results_by_id(report)[check_id]["reason"], results_by_id(report)[check_id]
    # the threads of RT-10 ran on the runner
    assert {"RT-1", "RT-6", "RT-10", "NDATA-3", "NDATA-4", "OPS-2"} <= set(outcomes)
    assert code == 0 and report["verdict"] == "conformant", output
    assert report["options"]["target"] == "local"
    target = report["target"]
    assert target["transport"] == "local" and target["runner_version"].startswith("conformance_runner 0.3.0")
    local = {
        Path(x["path"]).relative_to(target["runner_dir"]).as_posix(): x["sha256"] for x in target["libraries"]
    }
    assert (
        local["lib/libreference_backend_runtime.so"]
        == hashlib.sha256(
            (reference_runner.parent / "lib" / "libreference_backend_runtime.so").read_bytes()
        ).hexdigest()
    )
    # The operator cases ran on the runner too (the OPS table is filled; dequantize has no cases, quantize has the
    # quantized cases, with int8 inputs; add, sub, mul, relu and linear have dynamic cases).
    rows = [row for row in report["operators"] if row["cases"]]
    without = {row["op"] for row in report["operators"] if not row["cases"]}
    assert without == {
        "quantized_decomposed::dequantize_per_tensor",
        "quantized_decomposed::dequantize_per_channel",
    }, report["operators"]
    assert len(rows) >= 7 and all(row["ran"] == row["delegated"] > 0 for row in rows), report["operators"]
    assert "RT-1" in results_by_id(report)
    verified = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "verify", str(tmp_path / "report.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert f"runtime checks ran on: local ({target['uname']}), conformance_runner 0.3.0" in verified.stdout


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--backend", "ReferenceBackend", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--target", "tcp://board"],
            "--target 'tcp://board' is not a target; give local, ssh://[user@]host[:port]",
        ),
        (["--target", "ssh://board:70000"], "the port is not a number from 1 to 65535"),
        (["--target", "local"], "--target local needs --runner"),
        (
            ["--target", "local", "--runner", "/nonexistent/conformance_runner"],
            "no runner at /nonexistent/conformance_runner: build it with `cmake -S conformance/device_runner -B build/runner",
        ),
        (["--runner", "x"], "--runner is given without --target"),
    ],
)
def test_bad_target_input_is_one_line(args, says, tmp_path):
    proc = cli(*args, "--report-dir", str(tmp_path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and says in lines[0], proc.stderr


def test_an_unreachable_host_is_one_line_and_quick(tmp_path, reference_runner):
    started = time.monotonic()
    proc = cli(
        "--target", "ssh://127.0.0.1:1", "--runner", str(reference_runner), "--report-dir", str(tmp_path)
    )
    assert time.monotonic() - started < 60
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("executorch-conformance run: cannot reach ssh://127.0.0.1:1: ")
    assert "Connection refused" in lines[0] and "ssh keys" in lines[0]
