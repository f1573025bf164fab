"""Turns the per-release results in matrix/results/ into matrix/README.md:
release by {AOT, .pte ids, runtime, ABI}, with links to the reports and a
badge per release."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

from matrix.releases import RELEASES

#: Table column -> check ID prefixes it aggregates.
COLUMNS = {"AOT": ("AOT-",), ".pte ids": ("SER-", "BLOB-"), "runtime": ("RT-",)}


def cell(results: list[dict[str, Any]], prefixes: tuple[str, ...]) -> str:
    """pass / fail / n/a for the checks whose IDs start with ``prefixes``."""
    mine = [r for r in results if r["id"].startswith(prefixes)]
    if not mine:
        return "not run"
    failed = [r["id"] for r in mine if r["outcome"] in ("failed", "error", "unexpected_pass")]
    if failed:
        return f"**fail** ({', '.join(failed)})"
    passed = sum(r["outcome"] == "passed" for r in mine)
    skipped = [r for r in mine if r["outcome"] in ("not_applicable", "expected_failure")]
    if not passed:
        return f"n/a: {skipped[0]['reason']}"
    return f"pass ({passed}/{len(mine)})" if skipped else "pass"


def abi_cell(abi: dict[str, Any] | None) -> str:
    """The verdict of ``abi check`` (JSON output) for the reference library built for 1.5.1."""
    if abi is None:
        return "not run"
    if abi.get("error") or not abi.get("verdicts"):
        return f"n/a: {abi.get('error', 'no verdict')}"
    (v,) = abi["verdicts"]
    if v["verdict"] == "binary compatible":
        return "pass (binary compatible)"
    first = v["reasons"][0] if v["reasons"] else ""
    more = f" (+{len(v['reasons']) - 1} more in abi.json)" if len(v["reasons"]) > 1 else ""
    return f"{v['verdict']}: {first[:110]}{'…' if len(first) > 110 else ''}{more}"


def render(results_dir: Path, out: Path, command: str) -> str:
    rows = ["| release | torch | AOT | .pte ids | runtime | ABI | report | badge |", "|---|---|---|---|---|---|---|---|"]
    for rel in RELEASES:
        folder = results_dir / rel.executorch
        report_path = folder / "report.json"
        if not report_path.exists():
            reason = (folder / "skipped.txt").read_text().strip() if (folder / "skipped.txt").exists() else "no result"
            rows.append(f"| {rel.executorch} | {rel.torch} | not run: {reason} | | | | | |")
            continue
        report = json.loads(report_path.read_text())
        abi_path = folder / "abi.json"
        abi = json.loads(abi_path.read_text()) if abi_path.exists() else None
        env = report["environment"]
        cells = [cell(report["results"], prefixes) for prefixes in COLUMNS.values()]
        link = report_path.relative_to(out.parent).as_posix()
        badge = (folder / "badge.svg").relative_to(out.parent).as_posix()
        rows.append(
            f"| {env['executorch']} | {env['torch']} | {' | '.join(cells)} | {abi_cell(abi)} "
            f"| [report]({link}) | ![badge]({badge}) |"
        )
    created = sorted(
        json.loads((results_dir / r.executorch / "report.json").read_text())["created"]
        for r in RELEASES if (results_dir / r.executorch / "report.json").exists()
    )
    today = datetime.date.today().isoformat()
    text = "\n".join(
        [
            "# Release matrix",
            "",
            "The conformance suite and the ABI check of the reference backend against each ExecuTorch",
            "release. AOT: AOT-* checks; .pte ids: SER-* and BLOB-*; runtime: RT-* (with the runtime",
            "library built for that release, see runtime.txt in its folder); ABI: `abi check` of the",
            "runtime library built for executorch 1.5.1 against that release's baseline",
            "(abi_checks/baselines/): can one binary serve this release, or must a vendor rebuild?",
            "",
            *rows,
            "",
            f"Rendered {today} by `{command}` from `{results_dir.relative_to(out.parent).as_posix()}/`;"
            f" the results were produced from {created[0] if created else '?'} to {created[-1] if created else '?'}"
            " by `python -m matrix.run_release` in each release's environment.",
            "Each release's results are produced by `tox -e <release env>` (see tox.ini; `tox -m matrix` runs all).",
            "",
        ]
    )
    out.write_text(text)
    return text
