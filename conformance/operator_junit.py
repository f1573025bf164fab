"""junit-operators.xml: the report's ``operators`` rows as JUnit, one testcase per operator and dtype.

A CI system that reads JUnit then shows per-operator results next to the per-check junit.xml:
``classname`` is the operator, ``name`` the dtype, a ``failure`` carries the first failing case, and a
pair the corpus has no case for is ``skipped``. Written with the standard library's ElementTree: the
format is four elements, and pytest's own junitxml (which writes junit.xml) only knows pytest items.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

FILENAME = "junit-operators.xml"


def operators_junit(report: dict[str, Any]) -> ET.ElementTree | None:
    """The JUnit tree of ``report["operators"]``, or None when no OPS check ran."""
    rows = report.get("operators")
    if not rows:
        return None
    suite = ET.Element("testsuite", name="executorch-conformance-operators", tests=str(len(rows)))
    failures = skipped = 0
    for row in rows:
        case = ET.SubElement(suite, "testcase", classname=row["op"], name=row["dtype"])
        props = ET.SubElement(case, "properties")
        for key in ("cases", "excluded", "delegated", "ran", "passed", "worst_error", "tolerance_used"):
            ET.SubElement(props, "property", name=key, value="" if row.get(key) is None else str(row[key]))
        failing = row.get("first_failing")
        if failing:
            failures += 1
            element = ET.SubElement(case, "failure", message=f"case '{failing['case']}': {failing['reason']}")
            element.text = failing["reason"]
        elif not row.get("cases"):
            skipped += 1
            ET.SubElement(
                case, "skipped", message="the operator corpus has no case for this operator and dtype"
            )
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    suite.set("errors", "0")
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
