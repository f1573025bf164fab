"""The result tables are defined once (conformance/results/result_tables.py): the terminal, the HTML page and
Markdown draw the same columns in the same order with the same cells, on a real certify report."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_report_page import Dom

from conformance.results.html_report import render_page
from conformance.results.result_tables import (
    CHECKS,
    MODELS,
    OPERATORS,
    PROFILES,
    TABLES,
    operator_state,
    profile_rows,
    with_cases,
)
from conformance.results.summary_text import summary_lines
from conformance.results.table_text import markdown, render

REPO = Path(__file__).resolve().parents[2]
CERTIFIED = REPO / "tests" / "certification" / "data" / "reference-certify-0.5.0.json"

MODEL_ROW = {
    "model": "m5",
    "family": "transformer",
    "nodes": 4,
    "delegated_nodes": 1,
    "delegated_fraction": 0.25,
    "delegates": 1,
    "max_abs_error": 2e-7,
    "tolerance_used": 0.002,
    "result": "matched",
    "reason": "",
    "cpu_ops": {"aten::mean.dim": 2, "aten::bmm": 1},
}


@pytest.fixture(scope="module")
def report() -> dict:
    data = json.loads(CERTIFIED.read_text())
    assert data["verdict"] == "certified"
    return {**data, "models": [MODEL_ROW]}


def _html_tables(markup: str) -> dict[str, list[list[str]]]:
    """Each table of the page by id: its header row, then its body rows, as cell texts."""
    tables = {}
    for table_id, body in re.findall(r'<table id="([^"]+)">(.*?)</table>', markup, re.DOTALL):
        tables[table_id] = Dom(f"<table>{body}</table>").rows
    return tables


def _rows_of(report: dict, table) -> list[dict]:
    return {
        CHECKS.id: report["results"],
        PROFILES.id: profile_rows(report)[0],
        OPERATORS.id: with_cases(report["operators"]),
        MODELS.id: report["models"],
    }[table.id]


def test_terminal_page_and_markdown_draw_the_same_table(report):
    page = _html_tables(render_page(report))
    for table in TABLES:
        rows = _rows_of(report, table)
        assert rows, table.id
        html_rows = page[table.id]
        assert html_rows[0] == table.headers, table.id
        assert html_rows[1:] == [table.cells(r) for r in rows], table.id
        text = render(table, rows, 400)
        assert re.split(r"\s{2,}", text[0].strip()) == table.headers, table.id
        md = markdown(table, rows)
        assert [c.strip() for c in md[0].strip("|").split("|")] == table.headers, table.id
        assert len(md) == len(rows) + 2


def test_the_terminal_shows_each_cell_of_the_model(report):
    """Every cell the model gives appears on the row's line, in the column order."""
    lines = render(CHECKS, report["results"], 100_000)  # no wrapping
    for line, row in zip(lines[1:], report["results"]):
        at = 0
        for cell in CHECKS.cells(row):
            found = line.find(cell, at)
            assert found >= 0, (cell, line)
            at = found + len(cell)


def test_a_certified_page_marks_no_row_red_and_counts_every_pair(report):
    markup = render_page(report)
    assert 'class="failing"' not in markup
    assert "pass every case" not in markup
    pairs = report["operators"]
    without = [r for r in pairs if not r["cases"]]
    assert without, "the fixture has declared operators without corpus cases (quantize/dequantize)"
    with_ = len(pairs) - len(without)
    assert (
        f"{len(pairs)} declared operator and dtype pairs; of the {with_} with corpus cases, {with_} pass every "
        f"delegated case. No corpus case for {len(without)}, not shown: "
        + ", ".join(f"{r['op']} ({r['dtype']})" for r in without)
    ) in markup
    page = _html_tables(markup)
    shown = [r[0] for r in page[OPERATORS.id][1:]]
    assert "quantized_decomposed::dequantize_per_tensor" not in shown and len(shown) == with_
    assert set(re.findall(r'data-state="(\w+)"', markup)) == {"ok", "na"}  # na: PKG-7 not applicable
    text = "\n".join(summary_lines(report, 120))
    assert "dequantize_per_channel  float32" not in text and f"{with_} pass every delegated case" in text


def test_a_delegated_case_with_an_unsupported_trait_that_passed_is_not_a_failure():
    """The defect class: a row was judged by all its cases (or cases minus excluded) instead of the
    delegated ones. A backend may delegate a case whose trait it declares unsupported; it passed."""
    row = {
        "op": "aten::add.Tensor",
        "dtype": "float32",
        "cases": 10,
        "excluded": 2,
        "delegated": 10,
        "ran": 10,
        "passed": 10,
        "worst_error": 0.0,
        "tolerance_used": 0.0,
        "first_failing": None,
    }
    assert operator_state(row) == "ok"
    assert operator_state({**row, "delegated": 8, "ran": 8, "passed": 8}) == "ok"
    assert operator_state({**row, "passed": 9}) == "bad"
    assert operator_state({**row, "first_failing": {"case": "x", "reason": "y"}}) == "bad"
    assert operator_state({**row, "ran": 0, "passed": 0}) == "na"  # OPS-2 did not run
    assert operator_state({**row, "passed": "10"}) == "bad"  # a mistyped row is never shown green


def test_the_options_are_shown_as_json_not_python(report):
    markup = render_page(report)
    run = Dom(markup).by_id["run"]
    assert "certifytrue" in run.replace(" ", "") and "checksnull" in run.replace(" ", "")
    for python in ("True", "None", "{'", "=True"):
        assert python not in run, python


def test_a_page_of_a_broken_report_still_renders(report):
    broken = copy.deepcopy(report)
    broken["operators"][0] = {"op": 3, "cases": "x", "first_failing": "no"}
    broken["models"][0]["delegated_fraction"] = "half"
    broken["results"][0]["duration_s"] = "slow"
    markup = render_page(broken)
    assert 'id="operator-table"' in markup and 'id="model-table"' in markup


def test_lists_of_checks_name_the_clauses_no_check_tests():
    """There is no PKG-4: `list`, the terminal and the page say why instead of leaving a gap."""
    listed = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "list"], capture_output=True, text=True, timeout=600
    )
    assert listed.returncode == 0, listed.stderr
    assert "not checked by the suite: C-PKG-4:" in listed.stdout and "no PKG-4" in listed.stdout
    data = json.loads(CERTIFIED.read_text())
    assert any("C-PKG-4" in line for line in summary_lines(data))
    assert "not checked by the suite: C-PKG-4" in render_page(data)


def test_shared_setup_is_its_own_column_and_total(report):
    """A check's own time leaves out the shared setup it did first (results[].shared_s, suite 0.5.0)."""
    results = copy.deepcopy(report["results"])
    assert any(r.get("shared_s") for r in results), "the fixture, a real run, shared some setup"
    for r in results:
        r.pop("shared_s", None)  # a run where only AOT-5 did shared setup
    results[4].update(duration_s=14.2, shared_s=13.9)  # AOT-5: a lowering in a new process, shared
    cells = dict(zip(CHECKS.headers, CHECKS.cells(results[4])))
    assert (cells["s"], cells["shared s"]) == ("0.3", "13.9")
    assert CHECKS.cells(results[0])[CHECKS.headers.index("shared s")] == ""  # none
    text = summary_lines({**report, "results": results}, 120)
    assert any(line.startswith("shared setup: 13.9 s of lowerings") for line in text), text
    results[4]["shared_s"] = 99.0  # never more than the check's time
    assert CHECKS.cells(results[4])[CHECKS.headers.index("s")] == "0.0"


def test_page_markdown_draws_the_same_tables(tmp_path):
    """`page --markdown` (a CI job summary) writes the model's tables, and refuses what is not a report."""
    out = tmp_path / "summary.md"
    listed = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "page", str(CERTIFIED), "--markdown", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert listed.returncode == 0, listed.stderr
    text = out.read_text()
    data = json.loads(CERTIFIED.read_text())
    assert "**verdict: CERTIFIED** (certify mode)" in text
    for table, rows in ((CHECKS, data["results"]), (OPERATORS, with_cases(data["operators"]))):
        assert "\n".join(markdown(table, rows)) in text
    assert "not checked by the suite: C-PKG-4" in text
    bad = tmp_path / "list.json"
    bad.write_text("[]")
    refused = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "page", str(bad), "--markdown", "--out", "-"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert refused.returncode == 2 and "Traceback" not in refused.stderr and refused.stdout == ""
