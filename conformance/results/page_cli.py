"""``executorch-conformance page``: a run's report.json as one self-contained HTML page, or as Markdown.

    executorch-conformance page REPORT [--out FILE] [--markdown]

REPORT is a report.json; the page goes to FILE (default: report.html next
to REPORT). The page needs nothing from the network (conformance/results/html_report.py).
With ``--markdown``, the same tables as Markdown (default FILE: report.md; ``-``
for standard output), for a CI job summary (``>> "$GITHUB_STEP_SUMMARY"``).

Exit codes
  page: 0 written; 2 REPORT cannot be read or is not a report (one line), or FILE cannot be written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_USAGE = 0, 2


def _page(args: argparse.Namespace) -> int:
    from conformance.certification.strict_json import Unreadable, read_json
    from conformance.report import SCHEMA
    from conformance.results.html_report import write_page

    def fail(message: str) -> int:
        print(f"executorch-conformance page: {args.report}: {message}", file=sys.stderr)
        return EXIT_USAGE

    try:
        report = read_json(args.report)
    except Unreadable as exc:
        return fail(str(exc))
    if not isinstance(report, dict):
        return fail(f"holds a JSON {type(report).__name__}, not a report object")
    if report.get("schema") != SCHEMA or not isinstance(report.get("results"), list):
        return fail(
            f"is not a report (no 'schema': {SCHEMA!r} with a 'results' list); "
            "give the report.json that executorch-conformance run wrote"
        )
    if args.markdown:
        from conformance.results.summary_text import markdown_summary

        text = markdown_summary(report)
        if args.out == "-":
            sys.stdout.write(text)
            return EXIT_OK
    out = Path(args.out) if args.out else Path(args.report).with_suffix(".md" if args.markdown else ".html")
    try:
        if args.markdown:
            out.write_text(text, encoding="utf-8")
            path = out
        else:
            path = write_page(report, out)
    except OSError as exc:
        print(f"executorch-conformance page: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"page: {path.resolve()}")
    return EXIT_OK


def add_subcommands(subparsers) -> None:
    """Adds the ``page`` command to the executorch-conformance parser."""
    page = subparsers.add_parser(
        "page",
        help="write a self-contained HTML page of a report.json",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    page.add_argument("report", help="the report.json of a run")
    page.add_argument("--out", help="the file to write (default: REPORT with .html, or .md; '-': stdout)")
    page.add_argument(
        "--markdown", action="store_true", help="write the tables as Markdown (a CI job summary) instead"
    )
    page.set_defaults(func=_page)
