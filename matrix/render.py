"""Turns the per-release results in matrix/results/ into matrix/README.md:
release by {AOT, .pte ids, runtime, named data, packaging, ABI}, with links to
the reports and a badge per release, then the grid sections (matrix/grid_render.py)."""

from __future__ import annotations

import datetime
import html
import json
import os
from pathlib import Path
from typing import Any

from conformance.markdown_table import markdown_table
from matrix import arch_render
from matrix.grid_render import html_sections, load, markdown
from matrix.in_wheel_render import html_section as in_wheel_html
from matrix.in_wheel_render import markdown as in_wheel_markdown
from matrix.releases import RELEASES

#: Table column -> check ID prefixes it aggregates.
COLUMNS = {
    "AOT": ("AOT-",),
    ".pte ids": ("SER-", "BLOB-"),
    "runtime": ("RT-",),
    "named data": ("NDATA-",),
    "packaging": ("PKG-",),
}


def cell(results: list[dict[str, Any]], prefixes: tuple[str, ...]) -> str:
    """pass / fail / n/a for the checks whose IDs start with ``prefixes``; a pass that
    left some checks out names them (``pass (3/4; n/a: NDATA-3)``)."""
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
    if not skipped:
        return "pass"
    return f"pass ({passed}/{len(mine)}; n/a: {', '.join(r['id'] for r in skipped)})"


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


def _relative(path: Path, start: Path) -> str:
    """``path`` as a link from a file in ``start``, wherever either is (``..`` where needed)."""
    return Path(os.path.relpath(Path(path).resolve(), Path(start).resolve())).as_posix()


def render(results_dir: Path, out: Path, command: str) -> str:
    grids = load(results_dir)
    cells_of: list[list[str]] = []
    for rel in RELEASES:
        folder = results_dir / rel.executorch
        report_path = folder / "report.json"
        if not report_path.exists():
            reason = (
                (folder / "skipped.txt").read_text().strip()
                if (folder / "skipped.txt").exists()
                else "no result"
            )
            cells_of.append([rel.executorch, rel.torch, f"not run: {reason}", *[""] * (len(COLUMNS) + 2)])
            continue
        report = json.loads(report_path.read_text())
        abi_path = folder / "abi.json"
        abi = json.loads(abi_path.read_text()) if abi_path.exists() else None
        env = report["environment"]
        cells = [cell(report["results"], prefixes) for prefixes in COLUMNS.values()]
        link = _relative(report_path, out.parent)
        badge = _relative(folder / "badge.svg", out.parent)
        cells_of.append(
            [
                env["executorch"],
                env["torch"],
                *cells,
                abi_cell(abi),
                f"[report]({link})",
                f"![badge]({badge})",
            ]
        )
    rows = markdown_table(["release", "torch", *COLUMNS, "ABI", "report", "badge"], cells_of)
    created = sorted(
        json.loads((results_dir / r.executorch / "report.json").read_text())["created"]
        for r in RELEASES
        if (results_dir / r.executorch / "report.json").exists()
    )
    today = datetime.date.today().isoformat()
    text = "\n".join(
        [
            "# Release matrix",
            "",
            "The conformance suite and the ABI check of the reference backend against each ExecuTorch",
            "release. AOT: AOT-* checks; .pte ids: SER-* and BLOB-*; runtime: RT-* (with the runtime",
            "library built for that release, see runtime.txt in its folder); named data: NDATA-*;",
            "packaging: PKG-*; a pass that left checks out names them (`n/a: ...`, reasons in the report);",
            "ABI: `abi check` of the runtime library built for executorch 1.5.1 against that release's",
            "baseline (abi_checks/baselines/): can one binary serve this release, or must a vendor rebuild?",
            "",
            *rows,
            "",
            (
                f"Rendered {today} by `{command}` from `{_relative(results_dir, out.parent)}/`;"
                f" the results were produced from {created[0] if created else '?'} to {created[-1] if created else '?'}"
                " by `python -m matrix.run_release` and `python -m matrix.grid` in each release's environment."
            ),
            "Each release's results are produced by `tox -e <release env>` (see tox.ini; `tox -m matrix` runs all,",
            "`tox -m torch` the torch axis). Environments are made by uv (tox-uv).",
            "",
            *markdown(grids),
            *in_wheel_markdown(results_dir),
            *arch_render.markdown(arch_render.load(results_dir)),
        ]
    )
    out.write_text(text)
    return text


_HTML_CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
main { max-width: 1280px; margin: 0 auto; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 8px; }
table { border-collapse: collapse; width: 100%; background: #fff; font-size: 14px; }
th, td { border: 1px solid #e0e0e0; padding: 6px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.pass { background: #e8f5e9; color: #1b5e20; }
td.fail { background: #ffebee; color: #b71c1c; font-weight: 600; }
td.na { background: #f5f5f5; color: #616161; }
td.rebuild { background: #fff8e1; color: #8d6e00; }
p.note { color: #555; }
"""


def _cell_class(text: str) -> str:
    if text.startswith("pass"):
        return "pass"
    if text.startswith("**fail**"):
        return "fail"
    if text.startswith(("n/a", "not run")):
        return "na"
    return "rebuild"


def _html_cell(text: str) -> str:
    shown = text.replace("**fail**", "fail")
    return f'<td class="{_cell_class(text)}">{html.escape(shown)}</td>'


def _inline_svg(path: Path) -> str:
    """The badge's SVG markup, inlined (the page loads no file); empty if it is missing or not an SVG."""
    try:
        svg = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 and "<script" not in svg.lower() else ""


def render_html(results_dir: Path, out: Path, command: str) -> str:
    """The release matrix as one self-contained HTML page (badges inlined); written to ``out``."""
    e = html.escape
    grids = load(results_dir)
    rows = []
    for rel in RELEASES:
        folder = results_dir / rel.executorch
        report_path = folder / "report.json"
        if not report_path.exists():
            reason = (
                (folder / "skipped.txt").read_text().strip()
                if (folder / "skipped.txt").exists()
                else "no result"
            )
            rows.append(
                f'<tr id="release-{e(rel.executorch)}"><td>{e(rel.executorch)}</td><td>{e(rel.torch)}</td>'
                f'<td class="na" colspan="{len(COLUMNS) + 3}">not run: {e(reason)}</td></tr>'
            )
            continue
        report = json.loads(report_path.read_text())
        abi_path = folder / "abi.json"
        abi = json.loads(abi_path.read_text()) if abi_path.exists() else None
        env = report["environment"]
        cells = [cell(report["results"], prefixes) for prefixes in COLUMNS.values()] + [abi_cell(abi)]
        page = folder / "report.html"
        links = f'<a href="{e(_relative(report_path, out.parent))}">report.json</a>'
        if page.exists():
            links += f' · <a href="{e(_relative(page, out.parent))}">page</a>'
        rows.append(
            f'<tr id="release-{e(rel.executorch)}"><td>{e(str(env["executorch"]))}</td><td>{e(str(env["torch"]))}</td>'
            + "".join(_html_cell(c) for c in cells)
            + f"<td>{links}</td><td>{_inline_svg(folder / 'badge.svg')}</td></tr>"
        )
    today = datetime.date.today().isoformat()
    text = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>Release matrix</title><style>{_HTML_CSS}</style></head><body><main>"
        "<h1>Release matrix</h1>"
        "<p>The conformance suite and the ABI check of the reference backend against each ExecuTorch release. "
        "AOT: AOT-* checks; .pte ids: SER-* and BLOB-*; runtime: RT-*; named data: NDATA-*; packaging: PKG-*; "
        "ABI: <code>abi check</code> of the runtime library built for executorch 1.5.1 against that release's "
        "baseline.</p>"
        '<table id="matrix"><thead><tr><th>release</th><th>torch</th>'
        + "".join(f"<th>{e(c)}</th>" for c in COLUMNS)
        + "<th>ABI</th><th>report</th><th>badge</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        + html_sections(grids)
        + in_wheel_html(results_dir)
        + arch_render.html_section(arch_render.load(results_dir))
        + f'<p class="note">Rendered {e(today)} by <code>{e(command)}</code> from '
        f"<code>{e(_relative(results_dir, out.parent))}/</code>.</p></main></body></html>\n"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return text
