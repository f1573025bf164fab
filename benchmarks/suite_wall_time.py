"""Wall and CPU time of the full conformance suite against the reference backend (the README's main job).

    .venv/bin/python benchmarks/suite_wall_time.py [--runs 2] [--workers 1]

Runs ``executorch-conformance run --backend ReferenceBackend --certify`` the given number of times (the
first run also warms the OS file cache; ``--workers 1``, the default, is what ``scripts/conformance.sh``
runs) and prints, for each run, its wall time, the CPU seconds of every process it started (the judge, the
vendor processes, NDATA-5's: ``RUSAGE_CHILDREN``, which counts each process once its parent has reaped it),
how many cores that kept busy on average, and the checks that took longest (their ``duration_s`` in the
report; NDATA-5's program is made ahead, beside the checks before it).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from conformance.run.run_command import Options, run_command

#: Checks named per run, the longest first.
SLOWEST = 5


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if args.runs < 1 or args.workers < 1:
        parser.error("--runs and --workers must be 1 or more")
    for i in range(args.runs):
        with tempfile.TemporaryDirectory() as out:
            command = run_command("ReferenceBackend", Options(certify=True, workers=args.workers), out)
            cpu = children_cpu()
            start = time.perf_counter()
            proc = subprocess.run(command, capture_output=True, text=True)
            elapsed = time.perf_counter() - start
            cpu = children_cpu() - cpu
            report = Path(out) / "report.json"
            results = json.loads(report.read_text())["results"] if report.exists() else []
        status = "certified" if proc.returncode == 0 else f"exit {proc.returncode}"
        slowest = sorted(results, key=lambda r: -(r.get("duration_s") or 0))[:SLOWEST]
        print(
            f"run {i + 1}: {elapsed:6.1f} s wall, {cpu:6.1f} s CPU ({cpu / elapsed:.2f} cores busy), "
            f"{args.workers} worker(s), {status}; longest checks: "
            + ", ".join(f"{r['id']} {r.get('duration_s') or 0:.1f} s" for r in slowest)
        )


if __name__ == "__main__":
    main()
