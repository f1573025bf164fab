"""The result tables (``result_tables``) as plain text: aligned columns for a terminal of a given width,
the free text at the end wrapped under its column; and as Markdown (a CI job summary)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from conformance.markdown_table import markdown_table
from conformance.results.result_tables import Table


def render(table: Table, rows: Sequence[Any], width: int = 110) -> list[str]:
    """The header and one line per row (more where the free text wraps), fitting ``width`` where it can."""
    grid = [table.headers] + [table.cells(r) for r in rows]
    fixed = [i for i, c in enumerate(table.columns) if not c.free]
    widths = [max(len(line[i]) for line in grid) for i in fixed]
    free = len(fixed) < len(table.columns)
    lines = []
    for line in grid:
        head = "  ".join(
            line[i].rjust(w) if table.columns[i].numeric else line[i].ljust(w) for i, w in zip(fixed, widths)
        )
        if not free:
            lines.append(head.rstrip())
            continue
        room = max(30, width - len(head) - 2)
        wrapped = textwrap.wrap(line[-1], room, break_long_words=True, break_on_hyphens=False) or [""]
        lines.append(f"{head}  {wrapped[0]}".rstrip())
        lines += [" " * (len(head) + 2) + more for more in wrapped[1:]]
    return lines


def markdown(table: Table, rows: Sequence[Any]) -> list[str]:
    """A result table as Markdown (``markdown_table``), its numeric columns right-aligned."""
    return markdown_table(table.headers, [table.cells(r) for r in rows], [c.numeric for c in table.columns])
