"""Runs ``executorch-conformance`` in a subprocess and returns its JSON report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conformance.run.run_command import Options, run_command

BROKEN = Path(__file__).parent / "broken"

#: The suite as a plain pytest run (``pytest --pyargs conformance.suite``), the options to follow.
PLAIN_PYTEST = [sys.executable, "-m", "pytest", "--pyargs", "conformance.suite"]

#: Runs argv[1:] with SIGINT at its default disposition. A process started from a background job
#: (``cmd &``, nohup, some CI runners) inherits SIGINT as ignored, and exec keeps an ignored signal
#: ignored: Python would then never raise KeyboardInterrupt. A test that sends Ctrl-C sets it up itself.
_DEFAULT_SIGINT = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"


def with_default_sigint(cmd: list[str]) -> list[str]:
    """``cmd`` started so that SIGINT has its default disposition in it, whatever this process inherited."""
    return [sys.executable, "-c", _DEFAULT_SIGINT, *cmd]


def run_suite(
    report_dir: Path, backend: str, *extra: str, env: dict | None = None
) -> tuple[int, dict | None, str]:
    """Runs the CLI; returns (exit code, report or None, combined output)."""
    cmd = [*run_command(backend, Options(), report_dir), *extra]
    full_env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(BROKEN), os.environ.get("PYTHONPATH", "")]))
    full_env.update(env or {})
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=600)
    report_path = report_dir / "report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    return proc.returncode, report, proc.stdout + proc.stderr


def results_by_id(report: dict) -> dict[str, dict]:
    return {r["id"]: r for r in report["results"]}
