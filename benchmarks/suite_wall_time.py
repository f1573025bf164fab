"""Wall time of the full conformance suite against the reference backend.

    .venv/bin/python benchmarks/suite_wall_time.py [--runs 2] [--workers 2]

Runs ``executorch-conformance run --backend ReferenceBackend --certify`` the
given number of times (the first run also warms the OS file cache) and prints
each wall time.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time

from conformance.run.run_command import Options, run_command


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--workers", default="2")
    args = parser.parse_args()
    for i in range(args.runs):
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            command = run_command("ReferenceBackend", Options(certify=True, workers=int(args.workers)), out)
            proc = subprocess.run(command, capture_output=True, text=True)
            elapsed = time.perf_counter() - start
        status = "certified" if proc.returncode == 0 else f"exit {proc.returncode}"
        print(f"run {i + 1}: {elapsed:6.1f} s wall, {args.workers} workers, {status}")


if __name__ == "__main__":
    main()
