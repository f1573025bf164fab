"""The matrix table is rendered from the committed per-release results."""

from __future__ import annotations

import shutil
from pathlib import Path

from matrix.releases import RELEASES, release
from matrix.render import abi_cell, cell, render
from matrix.run_release import expectations

ROOT = Path(__file__).resolve().parents[2]


def test_committed_results_render_to_the_committed_table(tmp_path):
    shutil.copytree(ROOT / "matrix" / "results", tmp_path / "results")
    text = render(tmp_path / "results", tmp_path / "README.md", "test")
    rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines() if line.startswith("| 1.")}
    assert set(rows) == {r.executorch for r in RELEASES}
    for version in ("1.5.0", "1.5.1"):
        assert "| pass | pass | pass | pass (binary compatible) |" in rows[version]
    for version in ("1.3.1", "1.4.1"):  # runtime rebuilt per release joins the registry there
        assert "| pass | pass | pass | must rebuild:" in rows[version]
    for version in ("1.0.1", "1.1.0", "1.2.0"):
        assert "| pass | pass | n/a: the wheel ships no runtime/backend headers" in rows[version]
    committed = (ROOT / "matrix" / "README.md").read_text()
    assert [ln for ln in text.splitlines() if ln.startswith("| 1.")] == [
        ln for ln in committed.splitlines() if ln.startswith("| 1.")
    ]


def test_cells_aggregate_outcomes():
    results = [
        {"id": "RT-1", "outcome": "passed", "reason": ""},
        {"id": "RT-2", "outcome": "not_applicable", "reason": "no runtime"},
        {"id": "AOT-1", "outcome": "failed", "reason": "x"},
    ]
    assert cell(results, ("RT-",)) == "pass (1/2)"
    assert cell(results, ("AOT-",)) == "**fail** (AOT-1)"
    assert cell(results, ("SER-",)) == "not run"
    assert cell([results[1]], ("RT-",)) == "n/a: no runtime"
    assert abi_cell({"verdicts": [{"verdict": "binary compatible", "reasons": []}]}) == "pass (binary compatible)"
    assert abi_cell(None) == "not run"


def test_generated_expectations_name_their_reasons():
    text = expectations("no headers", False, release("1.0.1").expected_failures)
    assert '"RT-*" = "no headers"' in text and '"NDATA-3" = "no headers"' in text
    assert '"PKG-1"' in text and "[expected_failures]" in text and "tensor_layout" in text
    assert expectations(None, True) == "[not_applicable]\n"
