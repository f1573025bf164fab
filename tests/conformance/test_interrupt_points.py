"""Ctrl-C at any point of a run: while the vendor processes start, while the descriptor loads, while the
samples lower, while the runtime hangs in C++. Each time the run ends promptly with exit code 130, says
so without a traceback, leaves no process behind (none holds the terminal's pipe open) and no badge."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from suite_runner import BROKEN, with_default_sigint


def start_hanging_run(
    tmp_path: Path, broken_runtime_dir: Path, workers: str
) -> tuple[subprocess.Popen, list[str], threading.Thread]:
    """Starts RT-1, RT-3 and RT-6 of a runtime whose execute hangs in C++, in a session of its own (the
    terminal's foreground group), with a stale badge in its report directory; (the process, the lines
    it prints as they come, the thread that reads them)."""
    (tmp_path / "badge.json").write_text("{}")
    scratch = tmp_path / "tmp"  # the run's scratch directories, where the vendor process marks its steps
    scratch.mkdir()
    env = dict(
        os.environ,
        TMPDIR=str(scratch),
        BROKEN_RUNTIME_DIR=str(broken_runtime_dir),
        MISBEHAVE="execute:hang",
        PYTHONPATH=os.pathsep.join([str(BROKEN), os.environ.get("PYTHONPATH", "")]),
    )
    proc = subprocess.Popen(
        with_default_sigint(
            [
                sys.executable,
                "-m",
                "conformance.cli",
                "run",
                "--backend",
                "broken_backends.descriptors:MISBEHAVING",
                "--checks",
                "RT-1,RT-3,RT-6",
                "--timeout",
                "600",
                "-n",
                workers,
                "--report-dir",
                str(tmp_path),
            ]
        ),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    reader.start()
    return proc, lines, reader


def _started(tmp_path: Path, step: str) -> bool:
    """Whether a vendor process of the run started by ``start_hanging_run`` has begun a step that starts
    with ``step`` (its step files, under the run's scratch directory)."""
    for steps in (tmp_path / "tmp").rglob("*.steps"):
        try:
            if any(line.startswith(step) for line in steps.read_text(errors="replace").splitlines()):
                return True
        except OSError:
            continue
    return False


def _session_members(sid: int) -> list[str]:
    """The live (not zombie) processes of session ``sid``, as 'pid command'."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            fields = text.rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
            members.append(f"{stat.parent.name} {cmdline[:200]}")
    return members


@pytest.mark.full
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    ("workers", "after"),
    [("1", 0.0), ("2", 0.0), ("1", 2.0), ("2", 5.0), ("1", 9.0)],
    ids=["starting", "starting-xdist", "describing", "collecting-xdist", "lowering"],
)
def test_ctrl_c_at_any_point_ends_the_run_cleanly(tmp_path, broken_runtime_dir, workers, after):
    proc, lines, reader = start_hanging_run(tmp_path, broken_runtime_dir, workers)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not (tmp_path / "vendor-process.log").exists():
        time.sleep(0.05)
    time.sleep(after)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    interrupted = time.monotonic()
    try:
        proc.wait(timeout=60)
        reader.join(timeout=15)  # the pipe closes once no process holds it
        settled = time.monotonic() + 10  # multiprocessing's resource tracker ends once its users have
        while (left := _session_members(proc.pid)) and time.monotonic() < settled:
            time.sleep(0.2)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    output = "".join(lines)
    assert proc.returncode == 130 and time.monotonic() - interrupted < 45, output
    assert not reader.is_alive(), f"a process still holds the output pipe: {left}\n{output}"
    assert left == [], output
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
    assert "interrupted" in output, output
    report_path = tmp_path / "report.json"
    if report_path.exists():
        report = json.loads(report_path.read_text())
        assert report["interrupted"] is True and not report["certified"], output
    assert not (tmp_path / "badge.json").exists() and not (tmp_path / "badge.svg").exists()


@pytest.mark.parametrize(
    ("workers", "how"),
    [
        pytest.param("1", "SIGINT", id="in-process"),
        pytest.param("2", "SIGINT", id="xdist", marks=pytest.mark.full),
        pytest.param("1", "SIGTERM", id="in-process-sigterm", marks=pytest.mark.full),
    ],
)
def test_an_interrupted_run_is_never_conformant_and_writes_no_badge(
    tmp_path, broken_runtime_dir, workers, how
):
    """Ctrl-C (SIGINT to the foreground group) or SIGTERM (``kill``, ``timeout``, a CI runner) while the
    runtime hangs inside C++: the run ends promptly, the report says interrupted and not conformant, and
    no badge is written (a stale one is removed)."""
    proc, lines, reader = start_hanging_run(tmp_path, broken_runtime_dir, workers)
    deadline = time.monotonic() + 240
    # RT-3 starts once RT-1's progress line is out, lowers its samples (any time on a loaded machine), then
    # executes: the runtime hangs there. Wait for that step, not for a fixed time.
    while time.monotonic() < deadline and not any(re.match(r"\[\s*1/3\] RT-1 ", line) for line in lines):
        time.sleep(0.5)
    while time.monotonic() < deadline and not _started(tmp_path, "execute of"):
        time.sleep(0.5)
    time.sleep(1)  # the step is marked just before the runtime's execute, which then hangs
    if how == "SIGINT":
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    else:
        proc.send_signal(signal.SIGTERM)
    interrupted = time.monotonic()
    try:
        proc.wait(timeout=60)
        reader.join(timeout=10)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    output = "".join(lines)
    assert time.monotonic() - interrupted < 30 and "Traceback" not in output, output
    assert proc.returncode == 130, output
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["interrupted"] is True and report["verdict"] == "not conformant" and not report["certified"]
    assert [r["id"] for r in report["results"]] == ["RT-1", "RT-3", "RT-6"]
    assert "the run was interrupted: a partial run is never conformant" in report["verdict_reasons"]
    assert not (tmp_path / "badge.json").exists() and not (tmp_path / "badge.svg").exists()
