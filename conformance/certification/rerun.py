"""``verify --rerun``: runs the suite here with a report's recorded options and
compares the outcomes, check by check."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from conformance.report import ResultRow
from conformance.run.run_command import Options, run_command


def rerun_command(
    options: dict[str, Any], report_dir: str | Path, expectations: str | None = None
) -> list[str]:
    """The ``executorch-conformance run`` command line for a report's ``options``."""
    expectations = expectations or options["expectations"]
    if expectations:
        from conformance.input_files import check_input_file

        try:
            check_input_file(expectations, give="the expectations file (TOML) with --expectations")
        except FileNotFoundError:
            raise ValueError(
                f"the report ran with the expectations file {expectations}, which is not here; "
                "give it with --expectations"
            ) from None
    checks = options["checks"]
    recorded = Options(
        checks=checks if checks is None or isinstance(checks, str) else ",".join(checks),
        certify=bool(options["certify"]),
        expectations=str(expectations) if expectations else None,
        timeout=options["timeout"],
        # the recorded number, but never more than this machine's cores: the report is not trusted yet
        workers=max(1, min(options["workers"], os.cpu_count() or 1)),
    )
    return run_command(options["backend"], recorded, report_dir)


def rerun(
    report: dict[str, Any], expectations: str | None = None, timeout_s: float = 3600
) -> tuple[dict[str, Any], list[str]]:
    """(the new report, one line per check whose outcome differs)."""
    with tempfile.TemporaryDirectory(prefix="conformance-rerun-") as tmp:
        cmd = rerun_command(report["options"], tmp, expectations)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise ValueError(f"the re-run did not finish within {timeout_s:.0f} s") from None
        path = Path(tmp) / "report.json"
        if not path.exists():
            tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
            raise ValueError(f"the re-run wrote no report (exit {proc.returncode}): {tail}")
        try:
            new = json.loads(path.read_text(encoding="utf-8"))
            new["results"], new["environment"], new["backend"]["runtime_libraries"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"the re-run wrote a report this suite cannot read: {exc}") from None
    return new, differences(report, new)


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """One line per check whose outcome differs between the verified report ``old`` and the re-run's
    ``new`` (both written by the suite, so their results are rows of the schema's shape)."""
    before: dict[str, ResultRow] = {r["id"]: r for r in old["results"]}
    after: dict[str, ResultRow] = {r["id"]: r for r in new["results"]}
    out = []
    for id_ in list(before) + [i for i in after if i not in before]:
        a, b = before.get(id_), after.get(id_)
        if b is None:
            assert a is not None  # id_ comes from one of the two reports
            out.append(f"{id_}: the report says {a['outcome']}, the re-run has no result for it")
        elif a is None:
            out.append(f"{id_}: the report has no result for it, the re-run says {b['outcome']}")
        elif a["outcome"] != b["outcome"]:
            reason = f": {b['reason']}" if b["reason"] else ""
            out.append(f"{id_}: the report says {a['outcome']}, the re-run here says {b['outcome']}{reason}")
    return out


def environment_notes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Where this machine differs from the one that wrote the report."""
    notes = []
    for key in ("executorch", "torch", "python", "machine"):
        a, b = old["environment"].get(key), new["environment"].get(key)
        if a != b:
            notes.append(f"{key}: the report ran with {a}, here {b}")
    for key in ("version", "installed_version"):
        a, b = old["backend"].get(key), new["backend"].get(key)
        if a != b:
            notes.append(f"backend {key}: the report has {a}, here {b}")
    hashes = {
        Path(lib["path"]).name: lib.get("sha256")
        for lib in new["backend"]["runtime_libraries"]
        if lib.get("path") is not None  # None: runtime_libraries() raised (its error is recorded)
    }
    for lib in old["backend"].get("runtime_libraries", []):
        if lib.get("path") is None:
            continue
        name = Path(lib["path"]).name
        if name in hashes and hashes[name] != lib.get("sha256"):
            notes.append(
                f"runtime library {name}: the report tested {str(lib.get('sha256'))[:16]}…, "
                f"here it is {str(hashes[name])[:16]}…"
            )
    return notes
