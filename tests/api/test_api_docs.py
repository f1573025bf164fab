"""The docs of the vendor API say what the code does: certification.md's descriptor table lists the
descriptor's fields (issue 28), and api-stability.md the deprecations in force and the API's parts."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from abi_checks.tools.suite_api import PYTHON_MODULES
from conformance.deprecations import DEPRECATIONS
from conformance.descriptor import CAPABILITY_ABSENT, BackendDescriptor, SampleModel
from conformance.operators import OperatorDeclaration

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _table(text: str, header: str) -> dict[str, str]:
    """First cell (without backticks) -> the whole row, of the Markdown table starting at ``header``."""
    lines = text[text.index(header) :].splitlines()
    rows = {}
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        first = line.split("|")[1].strip()
        rows[first.strip("`")] = line
    return rows


def test_the_descriptor_table_lists_every_field_in_order():
    rows = _table(
        (DOCS / "certification.md").read_text(), "| field | required (default) | meaning | used by |"
    )
    assert list(rows) == [f.name for f in dataclasses.fields(BackendDescriptor)]


def test_each_support_class_row_names_every_field_of_its_class():
    rows = _table(
        (DOCS / "certification.md").read_text(), "| field | required (default) | meaning | used by |"
    )
    kinds = {f.name: f.type for f in dataclasses.fields(BackendDescriptor)}
    for name in CAPABILITY_ABSENT:
        cls = next(c for c in BackendDescriptor.__annotations__[name].split(" | ") if c != "None")
        support = getattr(__import__("conformance.descriptor", fromlist=[cls]), cls)
        row = rows[name]
        assert f"`{cls}(" in row, f"the {name} row does not show {cls}(...)"
        for field in dataclasses.fields(support):
            assert re.search(rf"\b{field.name}\b", row), f"the {name} row does not name {cls}.{field.name}"
        assert "| no: `None`; conditional" in row and f"`{name}` capability" in row, kinds[name]
    for field in dataclasses.fields(SampleModel):
        assert field.name in rows["sample_models"], f"the sample_models row does not name {field.name}"
    for field in dataclasses.fields(OperatorDeclaration):
        assert field.name in rows["operators"], f"the operators row does not name {field.name}"


def test_the_conditional_checks_section_names_every_capability():
    text = (DOCS / "certification.md").read_text()
    section = text[text.index("### Conditional checks and capabilities") : text.index("## 2. Register it")]
    for capability in CAPABILITY_ABSENT:
        assert f"`{capability}`" in section


def test_api_stability_lists_the_deprecations_in_force():
    text = (DOCS / "api-stability.md").read_text()
    rows = _table(text, "| deprecated | since | an error from | replacement |")
    assert len(rows) == len(DEPRECATIONS)
    for row, d in zip(rows.values(), DEPRECATIONS.values()):
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert cells[1:3] == [d.since, d.error_in], row


def test_api_stability_names_every_part_of_the_snapshot():
    text = (DOCS / "api-stability.md").read_text()
    part = text[text.index("## What the vendor API is") : text.index("## Versions")]
    for module in PYTHON_MODULES:
        path = module.replace(".", "/")
        assert path in part or f"`{module}`" in part or module.rsplit(".", 1)[-1] in part, module
