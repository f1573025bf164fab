"""Markdown tables, drawn in one place: the suite's results and summaries, ``check-wheel``, the scoreboard
and the matrix all call ``markdown_table``, so that escaping a cell is right everywhere or nowhere. It
imports nothing of the suite: every layer may use it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def markdown_table(
    header: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[bool] | None = None
) -> list[str]:
    """The lines of a GitHub-flavoured Markdown table: the header, the alignment row (``numeric`` columns
    right-aligned) and one line per row; a pipe in a cell is escaped and a line break becomes a space, so
    that no cell ends its row early. Every Markdown table of the suite, the scoreboard and the matrix is
    drawn here (tests/layering/test_markdown_table_owner.py)."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    align = ["---:" if right else "---" for right in (numeric or [False] * len(header))]
    return [line(header), "|" + "|".join(align) + "|", *(line(row) for row in rows)]
