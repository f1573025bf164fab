"""Runs ``executorch-conformance`` in a subprocess and returns its JSON report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BROKEN = Path(__file__).parent / "broken"

#: The suite as a plain pytest run (``pytest --pyargs conformance.suite``), the options to follow.
PLAIN_PYTEST = [sys.executable, "-m", "pytest", "--pyargs", "conformance.suite"]


def run_suite(
    report_dir: Path, backend: str, *extra: str, env: dict | None = None
) -> tuple[int, dict | None, str]:
    """Runs the CLI; returns (exit code, report or None, combined output)."""
    cmd = [
        sys.executable,
        "-m",
        "conformance.cli",
        "run",
        "--backend",
        backend,
        "--report-dir",
        str(report_dir),
        "-n",
        "1",
        *extra,
    ]
    full_env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(BROKEN), os.environ.get("PYTHONPATH", "")]))
    full_env.update(env or {})
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=600)
    report_path = report_dir / "report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    return proc.returncode, report, proc.stdout + proc.stderr


def results_by_id(report: dict) -> dict[str, dict]:
    return {r["id"]: r for r in report["results"]}
