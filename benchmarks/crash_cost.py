"""What a runtime that crashes (or hangs) on every execute costs a certify run, against the same backend
when it behaves: both runs of the misbehaving test backend (tests/conformance/broken/runtime), the second
with ``MISBEHAVE=execute:segv`` (or ``--fault``), through the CLI as a vendor runs it.

    .venv/bin/python benchmarks/crash_cost.py [--fault execute:segv] [--timeout 120] [--checks OPS]

Prints each run's wall time, its verdict and the OPS case outcomes, and the ratio (issue 31: at most 2).
Builds the backend's runtime library with CMake first (not timed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from conformance.run.run_command import Options, run_command

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests" / "conformance"
sys.path.insert(0, str(TESTS))


def run(report_dir: Path, env: dict[str, str], options: Options) -> tuple[float, dict]:
    cmd = run_command("broken_backends.descriptors:MISBEHAVING", options, report_dir)
    started = time.monotonic()
    subprocess.run(cmd, env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    return elapsed, json.loads((report_dir / "report.json").read_text())


def describe(report: dict) -> str:
    outcomes = Counter(
        c["outcome"] for row in report.get("operators") or () for c in row.get("case_results") or ()
    )
    ops = {r["id"]: r["outcome"] for r in report["results"] if r["id"].startswith("OPS")}
    return f"verdict {report['verdict']!r}, {ops}, OPS cases {dict(outcomes)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fault", default="execute:segv", help="MISBEHAVE of the faulty run")
    parser.add_argument("--timeout", default="120", help="the per-check timeout (--timeout)")
    parser.add_argument("--checks", help="run only these checks (default: --certify, every check)")
    args = parser.parse_args()
    from runner_build import build_broken_runtime

    extra = Options(checks=args.checks, certify=not args.checks, timeout=float(args.timeout))
    with tempfile.TemporaryDirectory(prefix="crash-cost-") as tmp:
        runtime = build_broken_runtime(Path(tmp) / "runtime")
        base = dict(os.environ, BROKEN_RUNTIME_DIR=str(runtime), PYTHONPATH=str(TESTS / "broken"))
        base.pop("MISBEHAVE", None)
        healthy_s, healthy = run(Path(tmp) / "healthy", base, extra)
        print(f"healthy run:          {healthy_s:7.1f} s  {describe(healthy)}")
        faulty_s, faulty = run(Path(tmp) / "faulty", dict(base, MISBEHAVE=args.fault), extra)
        print(f"MISBEHAVE={args.fault}: {faulty_s:7.1f} s  {describe(faulty)}")
    print(f"ratio faulty/healthy: {faulty_s / healthy_s:.2f} (load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
