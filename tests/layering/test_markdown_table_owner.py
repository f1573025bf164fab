"""Markdown tables have one drawer, ``conformance.markdown_table.markdown_table``: no module of the suite,
the scoreboard, the matrix or the ABI tools writes a table's alignment row (``|---|``) itself, so that a
cell holding a pipe or a line break is escaped in every table or in none."""

from __future__ import annotations

import ast
from pathlib import Path

from project_trees import ROOT, python_modules

from conformance.markdown_table import markdown_table

SCANNED = ("conformance", "scoreboard", "matrix", "abi_checks", "benchmarks", "kit/backend_kit", "scripts")
OWNER = ROOT / "conformance" / "markdown_table.py"


def alignment_rows(path: Path) -> list[int]:
    """Lines of ``path`` with a string constant (an f-string's parts included) holding ``---|``."""
    tree = ast.parse(path.read_bytes(), str(path))
    return sorted(
        {
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "---|" in node.value
        }
    )


def test_only_the_drawer_writes_an_alignment_row():
    modules = [p for p in python_modules(*SCANNED) if p != OWNER]
    assert len(modules) > 100, "the scan must see the trees that draw tables"
    copies = {p.relative_to(ROOT).as_posix(): lines for p in modules if (lines := alignment_rows(p))}
    assert copies == {}, f"draw Markdown tables with conformance.markdown_table.markdown_table: {copies}"


def test_a_cell_cannot_end_its_row_early():
    lines = markdown_table(["a", "b"], [["x | y", "two\nlines"], ["1", "2"]], numeric=[False, True])
    assert lines == ["| a | b |", "|---|---:|", "| x \\| y | two lines |", "| 1 | 2 |"]
