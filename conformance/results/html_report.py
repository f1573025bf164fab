"""A run's results as one self-contained HTML page (``report.html``).

``write_page(report, path)`` renders a report (the object of report.json,
docs/report-schema.md) into a single file: inline CSS, no script, no font,
image or style sheet from anywhere else. A Content-Security-Policy meta tag
(``default-src 'none'``) makes a browser refuse any load the page might
still attempt, so opening it offline or from an artifact store shows the
same page.

The page shows, in this order: the verdict with its reasons and warnings,
the count of each outcome, each profile's verdict and what the report certifies, the tables of ``result_tables`` (the same
columns, order and cells as the terminal's): one row per check, the
per-operator coverage when the report has an ``operators`` section, the
model tier's rows when it has ``models``; runtime log excerpts when present (a result's ``log``,
the report's ``runtime_log``; a string or a list of lines), then the
backend, its runtime libraries, the environment, the options and the
content hash (and whether it still matches).

The renderer never raises on a report of the wrong shape: a missing or
mistyped field is shown as missing, so a partial report still gets a page.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from conformance.outcomes import LABELS
from conformance.profiles import certified_profiles
from conformance.registry import not_checked_lines
from conformance.results.result_tables import (
    BAD_STATE,
    CHECKS,
    MODELS,
    OK,
    OPERATORS,
    OUTCOME_STATE,
    PROFILES,
    Table,
    model_state,
    operator_summary,
    profile_rows,
    shared_setup_line,
    with_cases,
)
from conformance.results.summary_text import deviations_line, simulated_line

#: Outcome -> CSS class of its cell (the row states of result_tables).
OUTCOME_CLASS = OUTCOME_STATE
VERDICT_CLASS = {"certified": "ok", "conformant": "ok", "not conformant": "bad"}
#: Longest log excerpt shown per entry (characters); the rest is cut with a note.
MAX_LOG_CHARS = 20_000

CSS = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
main { max-width: 1200px; margin: 0 auto; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.sub { color: #555; margin: 0 0 16px; }
.verdict { display: inline-block; padding: 6px 14px; border-radius: 6px; font-weight: 700; font-size: 18px;
           color: #fff; text-transform: uppercase; letter-spacing: .03em; }
.verdict.ok { background: #2e7d32; } .verdict.bad { background: #c62828; } .verdict.unknown { background: #757575; }
table { border-collapse: collapse; width: 100%; background: #fff; font-size: 14px; }
th, td { border: 1px solid #e0e0e0; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.ok { background: #e8f5e9; color: #1b5e20; font-weight: 600; }
td.bad { background: #ffebee; color: #b71c1c; font-weight: 600; }
td.warn { background: #fff8e1; color: #8d6e00; font-weight: 600; }
td.na { background: #f5f5f5; color: #616161; }
#results td:nth-child(-n+3) { white-space: nowrap; }
tr.failing td:first-child { border-left: 4px solid #c62828; }
code, pre { font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; }
pre { background: #263238; color: #eceff1; padding: 8px; overflow-x: auto; white-space: pre-wrap; margin: 4px 0; }
ul.reasons li { margin: 2px 0; }
.counts span { display: inline-block; margin: 0 12px 4px 0; }
.muted { color: #757575; }
details summary { cursor: pointer; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0; }
dl.kv dt { font-weight: 600; } dl.kv dd { margin: 0; overflow-wrap: anywhere; }
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _get(obj: Any, key: str, default: Any = None) -> Any:
    return obj.get(key, default) if isinstance(obj, dict) else default


def _list(obj: Any) -> list:
    return obj if isinstance(obj, list) else []


def _log_text(value: Any) -> str | None:
    if isinstance(value, str):
        text = value
    elif isinstance(value, list):
        text = "\n".join(str(line) for line in value)
    else:
        return None
    text = text.strip("\n")
    if not text.strip():
        return None
    if len(text) > MAX_LOG_CHARS:
        text = text[:MAX_LOG_CHARS] + f"\n… ({len(text) - MAX_LOG_CHARS} more characters in report.json)"
    return text


def _kv(pairs: list[tuple[str, Any]]) -> str:
    rows = "".join(f"<dt>{_e(k)}</dt><dd>{v if isinstance(v, _Html) else _e(v)}</dd>" for k, v in pairs)
    return f'<dl class="kv">{rows}</dl>'


class _Html(str):
    """Markup already escaped."""


def _hash_state(report: dict[str, Any]) -> str:
    from conformance.report import content_hash

    stored = _get(report, "content_sha256")
    if not isinstance(stored, str):
        return "no content hash"
    try:
        actual = content_hash(report)
    except (TypeError, ValueError):
        return f"{stored} (cannot be recomputed)"
    return (
        f"{stored} (matches)"
        if actual == stored
        else f"{stored} (does NOT match: edited after it was written)"
    )


def _table(table: Table, rows: list, note: str = "") -> str:
    """``table`` (result_tables) as an HTML table: the same columns, order and cells as the terminal's."""
    head = "".join(f"<th>{_e(h)}</th>" for h in table.headers)
    body = []
    for row in rows:
        state = table.row_state(row)
        cells = []
        for i, (column, text) in enumerate(zip(table.columns, table.cells(row))):
            classes = " ".join(
                x for x in ("num" if column.numeric else "", column.state(row) if column.state else "") if x
            )
            attrs = f' class="{classes}"' if classes else ""
            hint = table.hint(row) if i == 0 else None
            if hint:
                attrs += f' title="{_e(hint)}"'
            content = f"<code>{_e(text)}</code>" if i == 0 else _e(text)
            cells.append(f"<td{attrs}>{content}</td>")
        body.append(
            f'<tr class="{"failing" if state == BAD_STATE else ""}" data-state="{state}">{"".join(cells)}</tr>'
        )
    return (
        f'{note}<table id="{table.id}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


def _profiles_section(report: dict[str, Any]) -> str:
    """Each profile's verdict (docs/contract.md, "Profiles") and what the report certifies."""
    rows, computed = profile_rows(report)
    rows = [r for r in rows if isinstance(r, dict)]
    if not rows:
        return ""
    certified = certified_profiles(rows)
    note = (
        '<p class="muted">The report predates profiles (suite 0.6.0): computed from its results.</p>'
        if computed
        else ""
    )
    what = " + ".join(certified) or (
        "no profile" if _get(report, "mode") == "certify" else "nothing (standard mode)"
    )
    deviations = deviations_line(report)
    declared = f'<p id="declared-deviations">{_e(deviations)}</p>' if deviations else ""
    return (
        f'<section id="profiles-section"><h2>Profiles</h2><p id="certifies">certifies: <b>{_e(what)}</b></p>'
        + declared
        + _table(PROFILES, rows, note)
        + "</section>"
    )


def _results_section(results: list) -> str:
    if not results:
        return '<p class="muted">The report holds no results.</p>'
    shared = shared_setup_line(results)
    notes = ([shared] if shared else []) + not_checked_lines()
    return _table(CHECKS, results) + "".join(f'<p class="muted">{_e(line)}</p>' for line in notes)


#: The most case rows the page lists (those that did not pass; every case is in report.json).
CASE_ROWS = 500


def _case_rows(operators: list) -> list[str]:
    """One row per case that did not pass (op, dtype, case, outcome, reason)."""
    rows: list[str] = []
    for o in operators:
        cases = _get(o, "case_results")
        for c in cases if isinstance(cases, list) else []:
            if len(rows) >= CASE_ROWS:
                return rows
            if _get(c, "outcome") == "passed":
                continue
            rows.append(
                f"<tr><td><code>{_e(_get(o, 'op'))}</code></td><td>{_e(_get(o, 'dtype'))}</td>"
                f"<td>{_e(_get(c, 'case'))}</td><td>{_e(_get(c, 'outcome'))}</td><td>{_e(_get(c, 'reason'))}</td></tr>"
            )
    return rows


def _operators_section(operators: Any) -> str:
    if not isinstance(operators, list):
        return ""
    operators = [o for o in operators if isinstance(o, dict)]
    head = f"<h2>Operators</h2><p>{_e(operator_summary(operators))}</p>"
    shown = with_cases(operators)
    if not shown:
        return f'<section id="operators">{head}</section>'
    cases = _case_rows(operators)
    listed = (
        (
            f"<h3>Cases that did not pass</h3><p>{len(cases)}{' (the first)' if len(cases) >= CASE_ROWS else ''} "
            "of them; every case is in report.json (<code>case_results</code>) and junit-operators.xml.</p>"
            '<table id="operator-cases"><thead><tr><th>operator</th><th>dtype</th><th>case</th><th>outcome</th>'
            "<th>reason</th></tr></thead><tbody>" + "".join(cases) + "</tbody></table>"
        )
        if cases
        else ""
    )
    return '<section id="operators">' + head + _table(OPERATORS, shown) + listed + "</section>"


def _models_section(models: Any) -> str:
    """The model tier's rows (report-only), when the report has a ``models`` section."""
    if not isinstance(models, list) or not models:
        return ""
    matched = sum(model_state(m) == OK for m in models)
    return (
        '<section id="models"><h2>Models (report-only)</h2>'
        f"<p>{len(models)} standard architectures, {matched} matched eager PyTorch; "
        "they do not count for the verdict.</p>" + _table(MODELS, models) + "</section>"
    )


def _json_value(value: Any) -> str:
    """An option's value as JSON writes it (``true``, ``null``, ``"a"``), never a Python repr."""
    import json

    return value if isinstance(value, str) else json.dumps(value)


def _logs_section(report: dict[str, Any], results: list) -> str:
    parts = []
    overall = _log_text(_get(report, "runtime_log"))
    if overall:
        parts.append(
            f"<details open><summary>runtime log of the run</summary><pre>{_e(overall)}</pre></details>"
        )
    for r in results:
        text = _log_text(_get(r, "log"))
        if text:
            bad = OUTCOME_CLASS.get(_get(r, "outcome")) == "bad"
            parts.append(
                f"<details{' open' if bad else ''}><summary><code>{_e(_get(r, 'id'))}</code> "
                f"{_e(LABELS.get(_get(r, 'outcome'), _get(r, 'outcome')))}</summary><pre>{_e(text)}</pre></details>"
            )
    if not parts:
        return ""
    return '<section id="logs"><h2>Runtime log excerpts</h2>' + "".join(parts) + "</section>"


def render_page(report: dict[str, Any]) -> str:
    """The HTML page of ``report`` (a str)."""
    if not isinstance(report, dict):
        report = {}
    backend = _get(report, "backend", {})
    env = _get(report, "environment", {})
    results = [r for r in _list(_get(report, "results")) if isinstance(r, dict)]
    verdict = _get(report, "verdict")
    vclass = VERDICT_CLASS.get(verdict, "unknown")
    title = f"{_get(backend, 'id', 'unknown backend')} {_get(backend, 'version', '')}".strip()

    reasons = "".join(f"<li>{_e(x)}</li>" for x in _list(_get(report, "verdict_reasons")))
    warnings = "".join(f"<li>warning: {_e(x)}</li>" for x in _list(_get(report, "warnings")))
    warnings += "".join(f"<li>deprecated: {_e(x)}</li>" for x in _list(_get(report, "deprecations")))
    summary = _get(report, "summary", {})
    counts = "".join(
        f"<span><b>{_e(v)}</b> {_e(k.replace('_', ' '))}</span>"
        for k, v in (summary.items() if isinstance(summary, dict) else [])
        if k != "total" and v
    )
    total = _get(summary, "total", len(results))
    simulated = simulated_line(report)

    libs = []
    for lib in _list(_get(backend, "runtime_libraries")):
        line = f"<code>{_e(_get(lib, 'path'))}</code>"
        if _get(lib, "sha256"):
            line += f" sha256 <code>{_e(_get(lib, 'sha256'))}</code>"
        if _get(lib, "error"):
            line += f" <b>{_e(_get(lib, 'error'))}</b>"
        libs.append(f"<li>{line}</li>")
    caps = _get(backend, "capabilities")
    options = _get(report, "options")

    body = [
        f"<h1>{_e(title)}</h1>",
        (
            f'<p class="sub">executorch-conformance {_e(_get(report, "suite_version", "?"))} · '
            f"{_e(_get(report, 'mode', '?'))} mode · executorch {_e(_get(env, 'executorch', '?'))} · "
            f"{_e(_get(env, 'machine', '?'))} · {_e(_get(report, 'created', '?'))}</p>"
        ),
        f'<p><span class="verdict {vclass}" id="verdict">{_e(verdict or "no verdict")}</span></p>',
        f'<ul class="reasons" id="verdict-reasons">{reasons}{warnings}</ul>' if reasons or warnings else "",
        f'<p class="simulated" id="simulated"><b>{_e(simulated)}</b></p>' if simulated else "",
        f'<p class="counts" id="summary"><span><b>{_e(total)}</b> checks:</span>{counts}</p>',
        _profiles_section(report),
        "<h2>Checks</h2>",
        _results_section(results),
        _operators_section(_get(report, "operators")),
        _models_section(_get(report, "models")),
        _logs_section(report, results),
        '<section id="backend"><h2>Backend</h2>',
        _kv(
            [
                ("id", _get(backend, "id")),
                ("distribution", _get(backend, "distribution")),
                ("version", _get(backend, "version")),
                ("installed version", _get(backend, "installed_version")),
                ("capabilities", ", ".join(map(str, caps)) if isinstance(caps, list) and caps else "none"),
                ("runtime libraries", _Html(f"<ul>{''.join(libs)}</ul>") if libs else "none"),
            ]
        ),
        '</section><section id="environment"><h2>Environment</h2>',
        _kv([(k, v) for k, v in env.items()] if isinstance(env, dict) else []),
        '</section><section id="run"><h2>Run</h2>',
        _kv(
            [
                ("command", _Html(f"<code>{_e(_get(report, 'command'))}</code>")),
                (
                    "options",
                    _Html(_kv([(k, _json_value(v)) for k, v in options.items()]))
                    if isinstance(options, dict)
                    else "",
                ),
                (
                    "duration",
                    f"{_get(report, 'duration_s')} s" if _get(report, "duration_s") is not None else "",
                ),
                ("interrupted", "yes" if _get(report, "interrupted") else "no"),
                ("schema", f"{_get(report, 'schema')} {_get(report, 'schema_version')}"),
                ("content hash", _hash_state(report)),
            ]
        ),
        "</section>",
        '<p class="muted">This page shows report.json as it is; <code>executorch-conformance verify</code> checks it.</p>',
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}: {_e(verdict or 'no verdict')}</title><style>{CSS}</style></head>"
        f"<body><main>{''.join(body)}</main></body></html>\n"
    )


def write_page(report: dict[str, Any], path: str | os.PathLike) -> Path:
    """Writes the page of ``report`` to ``path`` (parents created) and returns the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_page(report), encoding="utf-8")
    return out
