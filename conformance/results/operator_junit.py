"""junit-operators.xml: the report's ``operators`` rows as JUnit, one testcase per operator case.

A CI system that reads JUnit then shows per-case results next to the per-check junit.xml: ``classname``
is the operator and dtype ('aten::add.Tensor float32'), ``name`` the case; a failed placement, failed
numerics or lowering error is a ``failure``, a crash or timeout an ``error``, a case not run or
declared unsupported is ``skipped``, each with the case's reason; the properties carry the flags and the
worst error. A pair the corpus has no case for is one ``skipped`` testcase (``classname`` the operator, ``name`` the dtype). A row
of a report older than schema 3 (no ``case_results``) is one testcase for the pair, failing with its
first failing case. Written with the standard library's ElementTree: the format is four elements, and
pytest's own junitxml (which writes junit.xml) only knows pytest items.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from conformance.operators import case_outcomes as co

FILENAME = "junit-operators.xml"

#: case outcome -> the JUnit element it becomes (None: a passing testcase)
_ELEMENT = {
    co.PASSED: None,
    co.FAILED_PLACEMENT: "failure",
    co.FAILED_NUMERICS: "failure",
    co.LOWERING_ERROR: "failure",
    co.CRASHED: "error",
    co.TIMED_OUT: "error",
    co.NOT_RUN: "skipped",
    co.EXCLUDED: "skipped",
}
_CASE_PROPERTIES = ("outcome", "excluded", "delegated", "ran", "worst_error", "tolerance_used")
_ROW_PROPERTIES = ("cases", "excluded", "delegated", "ran", "passed", "worst_error", "tolerance_used")


def _properties(parent: ET.Element, values: dict[str, Any], keys: tuple[str, ...]) -> None:
    props = ET.SubElement(parent, "properties")
    for key in keys:
        value = values.get(key)
        ET.SubElement(props, "property", name=key, value="" if value is None else str(value))


def _case(suite: ET.Element, row: dict[str, Any], case: dict[str, Any], counts: dict[str, int]) -> None:
    element = ET.SubElement(suite, "testcase", classname=f"{row['op']} {row['dtype']}", name=case["case"])
    _properties(element, case, _CASE_PROPERTIES)
    kind = _ELEMENT.get(case["outcome"], "failure")
    if kind is not None:
        counts[kind] += 1
        reason = case.get("reason") or ""
        child = ET.SubElement(element, kind, message=f"{case['outcome']}: {reason}"[:1000])
        if kind != "skipped":
            child.text = reason


def _pair(suite: ET.Element, row: dict[str, Any], counts: dict[str, int]) -> None:
    """One testcase for an operator row without case rows (a pair without cases, or schema 2)."""
    element = ET.SubElement(suite, "testcase", classname=row["op"], name=row["dtype"])
    _properties(element, row, _ROW_PROPERTIES)
    failing = row.get("first_failing")
    if failing:
        counts["failure"] += 1
        child = ET.SubElement(element, "failure", message=f"case '{failing['case']}': {failing['reason']}")
        child.text = failing["reason"]
    elif not row.get("cases"):
        counts["skipped"] += 1
        ET.SubElement(
            element, "skipped", message="the operator corpus has no case for this operator and dtype"
        )


def operators_junit(report: dict[str, Any]) -> ET.ElementTree | None:
    """The JUnit tree of ``report["operators"]``, or None when no OPS check ran."""
    rows = report.get("operators")
    if not rows:
        return None
    suite = ET.Element("testsuite", name="executorch-conformance-operators")
    counts = {"failure": 0, "error": 0, "skipped": 0}
    for row in rows:
        cases = row.get("case_results")
        if cases:
            for case in cases:
                _case(suite, row, case, counts)
        else:
            _pair(suite, row, counts)
    suite.set("tests", str(len(suite)))
    suite.set("failures", str(counts["failure"]))
    suite.set("errors", str(counts["error"]))
    suite.set("skipped", str(counts["skipped"]))
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.ElementTree(root)


def write_operators_junit(report: dict[str, Any], report_dir: Path) -> Path | None:
    """Writes junit-operators.xml next to the report (removing a stale one); its path, or None."""
    path = Path(report_dir) / FILENAME
    tree = operators_junit(report)
    if tree is None:
        path.unlink(missing_ok=True)
        return None
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return path
