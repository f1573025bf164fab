#!/usr/bin/env python3
"""Records what a released suite version said about golden vendor descriptors: the data of
``suite_*/recorded.json`` next to the descriptor modules.

    python tests/api/golden/record.py --commit COMMIT [--checks IDS] [--path DIR] [--keep-reports DIR] SPEC ...

For each SPEC ('suite_0_2_0.reference:DESCRIPTOR') it runs the suite *of that commit* (its own
``conformance`` package, from a temporary ``git worktree`` of the commit) against the reference backend
installed in this venv, with ``executorch-conformance run`` (``--certify`` unless ``--checks`` selects
checks), and appends the outcome to ``recorded.json`` of the spec's version folder: the verdict, each
check's outcome, the reasons of those that did not pass, the declared capabilities, or the descriptor
error the run stopped with. The worktree is removed afterwards; nothing of it is kept but this data.

The editable install of this project would shadow the old suite's ``conformance`` package: a
``sitecustomize`` put first on PYTHONPATH (for the CLI and every process it starts) drops its import
finder, so that the worktree's package is the one imported.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from conformance.testing import Options, run_command

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]

_SITECUSTOMIZE = """\
import sys
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
"""


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()


def record(
    commit: str, spec: str, checks: str | None, worktree: Path, tmp: Path, path: tuple[str, ...] = ()
) -> dict:
    report_dir = tmp / "reports" / spec.replace(":", "_")
    # the command line the suite has kept since 0.2.0 (conformance.testing builds today's the same way)
    command = run_command(spec, Options(checks=checks, certify=not checks), report_dir)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp / "site"), str(worktree), str(HERE), *path]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    done = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True, timeout=3600)
    version = (
        subprocess.run(
            [sys.executable, "-c", "from conformance.version import SUITE_VERSION; print(SUITE_VERSION)"],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    run: dict = {
        "spec": spec,
        "commit": _git("rev-parse", commit),
        "suite_version": version,
        "checks": checks,
        "exit_code": done.returncode,
    }
    report = report_dir / "report.json"
    if report.exists():
        run["report"] = report.read_text()
        data = json.loads(run["report"])
        run["verdict"] = data["verdict"]
        run["capabilities"] = data["backend"].get("capabilities", [])
        run["outcomes"] = {r["id"]: r["outcome"] for r in data["results"]}
        run["reasons"] = {r["id"]: r["reason"] for r in data["results"] if r["outcome"] != "passed"}
    else:
        lines = [line for line in (done.stderr + done.stdout).splitlines() if "descriptor" in line.lower()]
        run["error"] = lines[-1] if lines else (done.stderr.strip().splitlines() or ["(no output)"])[-1]
    return run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commit", required=True)
    ap.add_argument("--checks", help="check ids or areas (default: a whole certify run)")
    ap.add_argument(
        "--path",
        action="append",
        default=[],
        help="a directory the descriptor modules import from (repeatable)",
    )
    ap.add_argument(
        "--keep-reports",
        metavar="DIR",
        help="write each run's report.json as DIR/<attribute>.json instead of appending to recorded.json "
        "(the claims of docs/api-stability.md, 'A claim carries over')",
    )
    ap.add_argument("specs", nargs="+")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="golden-record-") as name:
        tmp = Path(name)
        (tmp / "site").mkdir()
        (tmp / "site" / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        worktree = tmp / "suite"
        _git("worktree", "add", "--detach", str(worktree), args.commit)
        try:
            for spec in args.specs:
                run = record(args.commit, spec, args.checks, worktree, tmp, tuple(args.path))
                report = run.pop("report", None)
                if args.keep_reports:
                    if report is None:
                        raise SystemExit(f"{spec} @ {args.commit} wrote no report: {run.get('error')}")
                    kept = Path(args.keep_reports) / f"{spec.split(':')[1]}.json"
                    kept.parent.mkdir(parents=True, exist_ok=True)
                    kept.write_text(report)
                    print(f"{spec} @ {args.commit}: {run['verdict']}, report {kept}")
                    continue
                run["command"] = shlex.join(
                    ["python", "tests/api/golden/record.py", "--commit", args.commit]
                    + (["--checks", args.checks] if args.checks else [])
                    + [spec]
                )
                out = HERE / spec.split(".")[0] / "recorded.json"
                runs = json.loads(out.read_text())["runs"] if out.exists() else []
                runs = [r for r in runs if not (r["spec"] == spec and r["commit"] == run["commit"])] + [run]
                out.write_text(json.dumps({"runs": runs}, indent=1, sort_keys=True) + "\n")
                print(f"{spec} @ {args.commit}: {run.get('verdict') or run.get('error')}")
        finally:
            _git("worktree", "remove", "--force", str(worktree))
    return 0


if __name__ == "__main__":
    sys.exit(main())
