"""Renders the scoreboard from the committed results: backend x check, backend x operator, backend x model,
and the triage of every failure, as markdown (scoreboard/SCOREBOARD.md) and an HTML page
(scoreboard/scoreboard.html).

    python -m scoreboard.render                 # write both
    python -m scoreboard.render --check         # exit 1 if the committed files differ from a fresh render
    python -m scoreboard.render --results DIR   # render other results (a short run's) to --out DIR

Rows are the directories of ``--results`` that hold a report.json, in the order of scoreboard/rows.json
(others after, by name): a descriptor run with ``python -m scoreboard.run --row NAME=SPEC`` is one more
row. The triage (scoreboard/triage.json) gives the class of each failure on a real backend: (a) a defect
of that backend, with its reproducer; (b) the contract asks what a sound backend cannot or should not do;
(c) a defect of the suite. A failure of a row marked ``real`` that the triage does not explain is listed
as untriaged. The output depends on the results and the triage only (no clock): the same inputs render
the same files.
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import json
import sys
from pathlib import Path
from typing import Any

from conformance.markdown_table import markdown_table
from conformance.profiles import PROFILES
from conformance.results.result_tables import BAD_STATE, model_state
from scoreboard.run import RESULTS, ROWS, rows

HERE = Path(__file__).resolve().parent
TRIAGE = HERE / "triage.json"
MARKDOWN = "SCOREBOARD.md"
PAGE = "scoreboard.html"
CLASSES = {
    "a": "a defect of the backend (reproducer, to report upstream)",
    "b": "the contract asked what a sound backend cannot or should not do (clause changed)",
    "c": "a defect of the suite (fixed)",
}
SHORT = {
    "passed": "PASS",
    "failed": "FAIL",
    "not_applicable": "N/A",
    "crashed": "CRASH",
    "timed_out": "TIMEOUT",
    "not_run": "NOT RUN",
    "error": "ERROR",
    "expected_failure": "XFAIL",
    "unexpected_pass": "XPASS",
}
FAILING = {"failed", "crashed", "timed_out", "error", "unexpected_pass"}


@dataclasses.dataclass
class Row:
    name: str
    title: str
    real: bool
    report: dict[str, Any]
    run: dict[str, Any]

    def results(self) -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in self.report["results"]}

    def operators(self) -> dict[str, dict[str, Any]]:
        return {f"{o['op']} {o['dtype']}": o for o in self.report.get("operators") or []}

    def models(self) -> dict[str, dict[str, Any]]:
        return {m["model"]: m for m in self.report.get("models") or []}


def load_rows(results: Path) -> list[Row]:
    known = rows(ROWS)
    names = [n for n in known if (results / n / "report.json").is_file()]
    names += sorted(
        p.name for p in results.iterdir() if (p / "report.json").is_file() and p.name not in known
    )
    out = []
    for name in names:
        meta = known.get(name, {})
        run_path = results / name / "run.json"
        out.append(
            Row(
                name,
                meta.get("title", name),
                bool(meta.get("real", False)),
                json.loads((results / name / "report.json").read_text()),
                json.loads(run_path.read_text()) if run_path.is_file() else {},
            )
        )
    return out


def load_triage(path: Path = TRIAGE) -> dict[tuple[str, str], dict[str, Any]]:
    """(row, item) -> entry; item is a check id, 'op:OP DTYPE' or 'model:NAME'. ValueError naming a bad entry."""
    data = json.loads(path.read_text()) if path.is_file() else {"entries": []}
    found = {}
    for i, entry in enumerate(data["entries"]):
        for key in ("row", "item", "class", "title", "explanation"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise ValueError(f"{path.name}: entries[{i}] has no {key!r} (a non-empty string)")
        if entry["class"] not in CLASSES:
            raise ValueError(
                f"{path.name}: entries[{i}] class {entry['class']!r} is not one of {', '.join(CLASSES)}"
            )
        if entry["class"] == "a" and not entry.get("reproducer"):
            raise ValueError(f"{path.name}: entries[{i}] ({entry['item']}) is class (a) without a reproducer")
        for row in entry["row"].split(","):
            found[(row, entry["item"])] = entry
    return found


def failures(row: Row) -> list[tuple[str, str]]:
    """(item, what failed) of every failing check, operator row and model of ``row``."""
    out = [(cid, r.get("reason") or "") for cid, r in row.results().items() if r["outcome"] in FAILING]
    for key, o in row.operators().items():
        if o.get("first_failing"):
            out.append((f"op:{key}", f"{o['first_failing']['case']}: {o['first_failing']['reason']}"))
    for name, m in row.models().items():  # a model row not run (no runtime, no quantizer) is not a failure
        if m.get("result") is not None and model_state(m) == BAD_STATE:
            out.append((f"model:{name}", f"{m['result']}: {m.get('reason') or ''}"))
    return out


def _tag(entry: dict[str, Any] | None) -> str:
    return f" ({entry['class']})" if entry else ""


def _cell_check(row: Row, cid: str, triage) -> str:
    r = row.results().get(cid)
    if r is None:
        return "-"
    text = SHORT.get(r["outcome"], r["outcome"]) + (" (sim)" if r.get("simulated") is True else "")
    return text + (_tag(triage.get((row.name, cid))) if r["outcome"] in FAILING else "")


def _cell_op(row: Row, key: str, triage) -> str:
    o = row.operators().get(key)
    if o is None:
        return "-"
    used = "" if o.get("tolerance_used") is None else f", {o['tolerance_used']:.2g}x tol"
    tag = _tag(triage.get((row.name, f"op:{key}"))) if o.get("first_failing") else ""
    return f"{o['cases']}/{o['delegated']}/{o['passed']}{used}{tag}"


def _cell_model(row: Row, name: str, triage) -> str:
    m = row.models().get(name)
    if m is None:
        return "-"
    fraction = "" if m.get("delegated_fraction") is None else f" {100 * m['delegated_fraction']:.0f}%"
    tag = _tag(triage.get((row.name, f"model:{name}"))) if m.get("result") != "matched" else ""
    return f"{m['result']}{fraction}{tag}"


def _cell_profile(row: Row, profile_id: str) -> str:
    """The row's verdict of the profile (docs/contract.md, "Profiles"): the report's, or computed from its
    results for a report before suite 0.6.0; '-' when none of the profile's checks ran."""
    from conformance.report import Report, json_numbers

    # a report of suite 0.5.0 may hold Infinity (conformance.report.json_numbers): read as null here
    entries = row.report.get("profiles") or Report.from_dict(json_numbers(row.report)).computed_profiles()
    found = next((e for e in entries if e["id"] == profile_id), None)
    return "-" if found is None else found["verdict"].upper()


def tables(board: list[Row], triage) -> dict[str, list[list[str]]]:
    """Each table as rows of cells, its header first."""
    names = [r.name for r in board]
    checks = list(dict.fromkeys(cid for r in board for cid in r.results()))
    ops = sorted(dict.fromkeys(k for r in board for k in r.operators()))
    models = list(dict.fromkeys(k for r in board for k in r.models()))
    summary = [
        [
            "backend",
            "verdict",
            "passed",
            "failed",
            "not applicable",
            "operator cases",
            "run",
            "wall time",
            "command",
        ]
    ]
    for r in board:
        s = r.report["summary"]
        cases = sum(o["cases"] for o in r.operators().values())
        summary.append(
            [
                r.title,
                r.report["verdict"].upper()
                + (" (simulated)" if isinstance(r.report.get("simulator"), dict) else ""),
                str(s["passed"]),
                str(s["failed"] + s["crashed"] + s["timed_out"] + s.get("error", 0)),
                str(s["not_applicable"]),
                str(cases),
                r.run.get("started", r.report.get("created", "?")),
                f"{r.run['wall_s']:.0f} s" if "wall_s" in r.run else "?",
                f"`{r.run.get('command', r.report.get('command', '?'))}`",
            ]
        )
    return {
        "summary": summary,
        "profiles": [["profile", *names]]
        + [[p.name, *(_cell_profile(r, p.id) for r in board)] for p in PROFILES],
        "checks": [["check", *names]]
        + [[cid, *(_cell_check(r, cid, triage) for r in board)] for cid in checks],
        "operators": [["operator dtype", *names]]
        + [[k, *(_cell_op(r, k, triage) for r in board)] for k in ops],
        "models": [["model", *names]] + [[m, *(_cell_model(r, m, triage) for r in board)] for m in models],
    }


def _md_table(rows_: list[list[str]]) -> list[str]:
    return markdown_table(rows_[0], rows_[1:])


def triage_rows(board: list[Row], triage) -> tuple[list[list[str]], list[tuple[str, str, str]]]:
    """(the triage table, the failures of real rows that no entry explains)."""
    table = [["backend", "failure", "class", "what it is", "reproducer"]]
    untriaged = []
    for r in board:
        for item, what in failures(r):
            entry = triage.get((r.name, item))
            if entry is None:
                if r.real:
                    untriaged.append((r.name, item, what))
                continue
            table.append(
                [
                    r.name,
                    item,
                    f"({entry['class']})",
                    f"{entry['title']}: {entry['explanation']}",
                    entry.get("reproducer") or "",
                ]
            )
    return table, untriaged


def dated(board: list[Row]) -> str:
    starts = sorted(r.run.get("started", r.report.get("created", "")) for r in board)
    return starts[-1][:10] if starts else "never"


def markdown(board: list[Row], triage) -> str:
    t = tables(board, triage)
    table, untriaged = triage_rows(board, triage)
    lines = [
        "# Scoreboard: the conformance suite on real backends",
        "",
        f"Results of {dated(board)}, made by `tox -e scoreboard` (`python -m scoreboard.run`), rendered by "
        "`python -m scoreboard.render` from `scoreboard/results/` and the triage in `scoreboard/triage.json` "
        "(see [README.md](README.md)). Classes of a failure: "
        + "; ".join(f"({k}) {v}" for k, v in CLASSES.items())
        + ".",
        "",
        "## Backends",
        "",
        *_md_table(t["summary"]),
        "",
        "## Backend x profile",
        "",
        (
            "Each profile's verdict ([docs/contract.md](../docs/contract.md), \"Profiles\"): the suite's verdict "
            "over the profile's checks alone; NOT CLAIMED where the backend declares none of its capabilities."
        ),
        "",
        *_md_table(t["profiles"]),
        "",
        "## Backend x check",
        "",
        *_md_table(t["checks"]),
        "",
        "## Backend x operator",
        "",
        (
            "Each cell: cases / delegated / passed, and the worst error as a fraction of the tolerance it was "
            "judged with (1x is the bound)."
        ),
        "",
        *_md_table(t["operators"]),
        "",
        "## Backend x model",
        "",
        "Each cell: the result and the share of the model's operator nodes delegated to the backend.",
        "",
        *_md_table(t["models"]),
        "",
        "## Triage",
        "",
        *_md_table(table),
        "",
    ]
    if untriaged:
        lines += ["## Untriaged failures", ""]
        lines += [f"- {row}: {item}: {what[:300]}" for row, item, what in untriaged]
        lines.append("")
    return "\n".join(lines)


def _html_table(rows_: list[list[str]]) -> str:
    def cell(tag: str, text: str) -> str:
        cls = ""
        for word, name in (("FAIL", "fail"), ("PASS", "pass"), ("N/A", "na")):
            if text.startswith(word):
                cls = f' class="{name}"'
        return f"<{tag}{cls}>{html.escape(text)}</{tag}>"

    head = "".join(cell("th", c) for c in rows_[0])
    body = "".join("<tr>" + "".join(cell("td", c) for c in row) + "</tr>" for row in rows_[1:])
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page(board: list[Row], triage) -> str:
    t = tables(board, triage)
    table, untriaged = triage_rows(board, triage)
    sections = [
        ("Backends", t["summary"]),
        ("Backend x profile", t["profiles"]),
        ("Backend x check", t["checks"]),
        ("Backend x operator (cases / delegated / passed, worst error of tolerance)", t["operators"]),
        ("Backend x model", t["models"]),
        ("Triage", table),
    ]
    body = "".join(f"<h2>{html.escape(title)}</h2>{_html_table(rows_)}" for title, rows_ in sections)
    if untriaged:
        items = "".join(f"<li>{html.escape(f'{r}: {i}: {w[:300]}')}</li>" for r, i, w in untriaged)
        body += f"<h2>Untriaged failures</h2><ul>{items}</ul>"
    style = (
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}"
        "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;vertical-align:top}"
        ".fail{background:#fdd}.pass{background:#dfd}.na{color:#888}"
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Scoreboard</title>'
        f"<style>{style}</style></head><body><h1>Scoreboard: the conformance suite on real backends</h1>"
        f"<p>Results of {html.escape(dated(board))}; classes: "
        + html.escape("; ".join(f"({k}) {v}" for k, v in CLASSES.items()))
        + f"</p>{body}</body></html>\n"
    )


def render(results: Path, triage_path: Path = TRIAGE) -> dict[str, str]:
    """File name -> text of the rendered scoreboard."""
    board = load_rows(results)
    if not board:
        raise SystemExit(f"scoreboard: no results under {results} (run python -m scoreboard.run first)")
    triage = load_triage(triage_path)
    return {MARKDOWN: markdown(board, triage), PAGE: page(board, triage)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scoreboard.render", description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--triage", type=Path, default=TRIAGE)
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument(
        "--check", action="store_true", help="compare with the files in --out instead of writing"
    )
    args = parser.parse_args(argv)
    try:
        rendered = render(args.results, args.triage)
    except ValueError as exc:
        print(f"scoreboard: {exc}", file=sys.stderr)
        return 2
    if args.check:
        stale = [
            n
            for n, text in rendered.items()
            if not (args.out / n).is_file() or (args.out / n).read_text() != text
        ]
        if stale:
            print(
                f"scoreboard: {', '.join(stale)} differ from a fresh render: python -m scoreboard.render",
                file=sys.stderr,
            )
            return 1
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in rendered.items():
        (args.out / name).write_text(text)
        print(f"scoreboard: wrote {args.out / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
