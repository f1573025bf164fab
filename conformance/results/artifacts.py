"""The files a run writes beside its JSON report, whichever way it was started: ``executorch-conformance run``
or plain ``pytest --pyargs conformance.suite --et-report PATH``. The plugin writes them when it writes the
report (``conformance.plugin``), so both spellings get the same files:

- ``junit-operators.xml``: one testcase per operator case (``conformance.results.operator_junit``); removed
  when the report has no operator rows;
- ``badge.svg`` and ``badge.json`` (``conformance.certification.badge``); an interrupted run writes none and
  removes those of an earlier run, since its verdict says nothing about the backend;
- the page, ``<report stem>.html`` (``report.html`` beside ``report.json``; ``conformance.results.html_report``).

The report may not itself be named like one of the fixed files (``reserved_name_problem``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from conformance.results.operator_junit import FILENAME as OPERATORS_JUNIT

BADGE_FILES = ("badge.svg", "badge.json")
#: The names the run writes beside the report, whatever the report is called.
RESERVED = (*BADGE_FILES, OPERATORS_JUNIT)


@dataclasses.dataclass(frozen=True)
class Artifacts:
    """What a run wrote beside its report: the per-case JUnit file (None without operator rows), the
    badge's SVG and JSON (None for an interrupted run) and the page."""

    operators_junit: Path | None
    badge: tuple[Path, Path] | None
    page: Path


def page_path(report_path: str | Path) -> Path:
    return Path(report_path).with_suffix(".html")


def reserved_name_problem(report_path: str | Path, flag: str) -> str | None:
    """Why the report cannot be written at ``report_path`` (given as ``flag``), or None."""
    name = Path(report_path).name
    if name in RESERVED or Path(report_path).suffix == ".html":
        return (
            f"{flag} {report_path}: the run writes {', '.join(RESERVED)} and the page (<report name>.html) beside "
            "the report; give the report another name (report.json)"
        )
    return None


def write_artifacts(report: dict[str, Any], report_path: str | Path) -> Artifacts:
    """Writes the files beside the report at ``report_path`` (see the module contract); what it wrote."""
    from conformance.certification.badge import write_badge
    from conformance.results.html_report import write_page
    from conformance.results.operator_junit import write_operators_junit

    out = Path(report_path).parent
    junit = write_operators_junit(report, out)
    badge = None
    if report.get("interrupted"):
        for name in BADGE_FILES:
            (out / name).unlink(missing_ok=True)
    else:
        badge = write_badge(report, out)
    return Artifacts(junit, badge, write_page(report, page_path(report_path)))


def found(report_path: str | Path) -> Artifacts:
    """The files beside the report at ``report_path`` as they are on disk (what a run in this process wrote)."""
    out = Path(report_path).parent
    junit = out / OPERATORS_JUNIT
    svg, endpoint = (out / name for name in BADGE_FILES)
    return Artifacts(
        junit if junit.exists() else None,
        (svg, endpoint) if svg.exists() and endpoint.exists() else None,
        page_path(report_path),
    )
