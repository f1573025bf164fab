"""The matrix table is rendered from the committed per-release results."""

from __future__ import annotations

import shutil
from pathlib import Path

from matrix.releases import RELEASES, release
from matrix.render import abi_cell, cell, render
from matrix.run_release import OWN_FILES, clear_own_files, expectations

ROOT = Path(__file__).resolve().parents[2]


def test_committed_results_render_to_the_committed_table(tmp_path):
    shutil.copytree(ROOT / "matrix" / "results", tmp_path / "results")
    text = render(tmp_path / "results", tmp_path / "README.md", "test").split("## The grid")[0]
    rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines() if line.startswith("| 1.")}
    assert set(rows) == {r.executorch for r in RELEASES}
    for version in ("1.5.0", "1.5.1"):
        assert (
            "| pass | pass | pass | pass |" in rows[version] and "pass (binary compatible)" in rows[version]
        )
    for version in (
        "1.1.0",
        "1.2.0",
        "1.3.1",
        "1.4.1",
    ):  # a runtime library built per release joins its registry
        assert "| pass | pass | pass | pass (" in rows[version] and "must rebuild:" in rows[version]
    # named data passes where it applies, and the row says what did not apply
    assert "n/a: NDATA-3" in rows["1.4.1"]
    # 1.0.1: the library built against 1.3.1's headers registers but is refused: a measured reason
    assert "| pass | pass | n/a: built with CMake against executorch 1.3.1's include/" in rows["1.0.1"]
    assert "golden program is refused" in rows["1.0.1"]
    committed = (ROOT / "matrix" / "README.md").read_text().split("## The grid")[0]
    assert [ln for ln in text.splitlines() if ln.startswith("| 1.")] == [
        ln for ln in committed.splitlines() if ln.startswith("| 1.")
    ]


def test_cells_aggregate_outcomes():
    results = [
        {"id": "RT-1", "outcome": "passed", "reason": ""},
        {"id": "RT-2", "outcome": "not_applicable", "reason": "no runtime"},
        {"id": "AOT-1", "outcome": "failed", "reason": "x"},
    ]
    assert cell(results, ("RT-",)) == "pass (1/2; n/a: RT-2)"  # a conditional n/a is not hidden
    assert cell(results, ("AOT-",)) == "**fail** (AOT-1)"
    assert cell(results, ("SER-",)) == "not run"
    assert cell([results[1]], ("RT-",)) == "n/a: no runtime"
    assert (
        abi_cell({"verdicts": [{"verdict": "binary compatible", "reasons": []}]})
        == "pass (binary compatible)"
    )
    assert abi_cell(None) == "not run"


def test_generated_expectations_name_their_reasons():
    text = expectations("no headers", False, release("1.0.1").expected_failures)
    assert '"RT-*" = "no headers"' in text and '"NDATA-3" = "no headers"' in text
    assert '"PKG-1"' in text and "[expected_failures]" in text and "tensor_layout" in text
    assert expectations(None, True) == "[not_applicable]\n"


def test_a_release_run_keeps_the_files_other_commands_wrote(tmp_path):
    """`tox -e et141` replaces the suite's outputs, not abi.json (matrix render) nor grid.json (matrix.grid)."""
    for name in (*OWN_FILES, "abi.json", "grid.json"):
        (tmp_path / name).write_text("old")
    clear_own_files(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["abi.json", "grid.json"]
