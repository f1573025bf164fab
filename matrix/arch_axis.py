"""The architecture axis: every runtime check of the reference backend and every operator case, on
x86-64 in-process, on x86-64 through the C++ runner, and on aarch64 through the runner under QEMU.

    python -m matrix.arch_axis [--results DIR] [--build DIR] [--rounds N]

In this environment (executorch 1.5.1): builds the x86-64 runner against the installed executorch
and the aarch64 runner against the aarch64 wheel (scripts/cross_build_runner.py), lowers every
sample, model and operator case once on this host, then runs the runtime checks (RUNTIME_CHECKS)
on each column with the same lowered programs and the same Context, so that a column's seconds are
its runtime part only. Writes ``<results>/arch/<column>.json``: per check its outcome, reason and
seconds (median of ``--rounds``), the operator rows (cases, ran, passed, worst error), what the
target was and how the runner was built. ``matrix render`` turns them into the architecture section
of matrix/README.md. Run it once on a quiet machine (about ten minutes here); CI runs only the RT
checks on aarch64 (tests/conformance/test_target_qemu.py).
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from matrix.runtime_build import REPO, required

#: The checks whose runtime calls go to the target (conformance/targets/runtime.py TASKS), in order.
RUNTIME_CHECKS = (
    "RT-1",
    "RT-2",
    "RT-3",
    "RT-4",
    "RT-5",
    "RT-6",
    "NDATA-3",
    "NDATA-4",
    "DYN-1",
    "DYN-2",
    "QNT-3",
    "CMP-2",
    "OPS-2",
)
#: column -> (title, machine, target URL or None for in-process, --arch of the runner build or None)
COLUMNS: dict[str, tuple[str, str, str | None, str | None]] = {
    "x86_64-in-process": ("x86-64 in-process", "x86_64", None, None),
    "x86_64-runner": ("x86-64 runner", "x86_64", "local", "x86_64"),
    "aarch64-qemu": ("aarch64 runner under emulation", "aarch64", "qemu-aarch64", "aarch64"),
}
SCRIPT = REPO / "scripts" / "cross_build_runner.py"


def build_runner(arch: str, build: Path) -> tuple[Path, dict[str, Any]]:
    """The runner for ``arch`` built by scripts/cross_build_runner.py (x86-64: against the installed
    executorch); its path and what cross-build.json says, without this machine's paths."""
    import executorch

    out = build / f"runner-{arch}"
    argv = [sys.executable, str(SCRIPT), "--arch", arch, "--out", str(out)]
    if arch == "x86_64":
        argv += ["--sdk", next(iter(executorch.__path__))]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(
            f"matrix.arch_axis: building the {arch} runner failed:\n{proc.stdout[-4000:]}{proc.stderr[-4000:]}"
        )
    info = json.loads((out / "cross-build.json").read_text())
    info.pop("runner", None)
    if arch == "x86_64":
        info["executorch"] = "the installed executorch package"
    return out / "runner" / "conformance_runner", info


def run_column(ctx, runner: Path | None, url: str | None, rounds: int) -> dict[str, Any]:
    """The runtime checks on one column: outcomes, reasons, median seconds, operator rows, target info."""
    from conformance.checks import all_checks, run_check

    ctx.use_target(url, runner)
    checks = {c.id: c for c in all_checks()}
    seconds: dict[str, list[float]] = {c: [] for c in RUNTIME_CHECKS}
    found: dict[str, dict[str, Any]] = {}
    started = time.monotonic()
    for _ in range(rounds):
        ctx.properties.clear()
        for check_id in RUNTIME_CHECKS:
            begin = time.monotonic()
            outcome, reason = run_check(ctx, checks[check_id])
            seconds[check_id].append(time.monotonic() - begin)
            found[check_id] = {"outcome": outcome, "reason": reason[:600]}
    wall = time.monotonic() - started
    operators: list[dict[str, Any]] = next(
        (json.loads(v) for k, v in ctx.properties.get("OPS-2", []) if k == "operators"), []
    )
    target = ctx.target.info if ctx.target is not None else None
    for check_id in RUNTIME_CHECKS:
        found[check_id]["seconds"] = round(statistics.median(seconds[check_id]), 3)
    return {
        "checks": found,
        "operators": [
            {k: row[k] for k in ("op", "dtype", "cases", "delegated", "ran", "passed", "worst_error")}
            for row in operators
        ],
        "seconds": round(wall / rounds, 2),
        "target": None
        if target is None
        else {
            k: target[k] for k in ("url", "transport", "machine", "runner_version", "emulator") if k in target
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=REPO / "matrix" / "results")
    parser.add_argument("--build", type=Path, default=REPO / "build" / "arch-axis")
    parser.add_argument("--rounds", type=int, default=1, help="runs per column (seconds: their median)")
    args = parser.parse_args(argv)
    from conformance.context import Context
    from conformance.descriptor import load_descriptor

    torch_version, et_version = required("torch"), required("executorch")
    runners = {}
    for machine in ("x86_64", "aarch64"):
        print(f"building the {machine} runner ...", flush=True)
        runners[machine] = build_runner(machine, args.build)
    ctx = Context(load_descriptor("ReferenceBackend"), "ReferenceBackend", timeout=600)
    out = args.results / "arch"
    out.mkdir(parents=True, exist_ok=True)
    try:
        print("lowering every sample and case (in-process, untimed) ...", flush=True)
        run_column(ctx, None, None, 1)
        for name, (title, machine, url, arch) in COLUMNS.items():
            runner, built = runners[arch] if arch is not None else (None, None)
            print(f"{title} ...", flush=True)
            column = run_column(ctx, runner, url, args.rounds)
            result = {
                "column": name,
                "title": title,
                "machine": machine,
                "executorch": et_version,
                "torch": torch_version,
                "created": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
                "command": "python -m matrix.arch_axis"
                + (f" --rounds {args.rounds}" if args.rounds != 1 else ""),
                "rounds": args.rounds,
                "runner_build": built,
                **column,
            }
            (out / f"{name}.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
            passed = sum(c["outcome"] == "passed" for c in column["checks"].values())
            cases = sum(row["ran"] for row in column["operators"])
            print(
                f"  {passed}/{len(RUNTIME_CHECKS)} passed, {cases} operator cases ran, {column['seconds']} s"
            )
    finally:
        ctx.close()
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
