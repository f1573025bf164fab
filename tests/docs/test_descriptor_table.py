"""docs/certification.md's descriptor field table is held to the descriptor's fields as
conformance/descriptor_fields.py derives them from the dataclass: every field has a row, in the
dataclass's order; the 'required' column says yes exactly for a field without a valid default; a
capability field (and only one) says it is conditional, and its 'used by' column names exactly the
checks that apply to that capability."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from conformance.checks import all_checks
from conformance.descriptor import BackendDescriptor
from conformance.descriptor_fields import Nested, kinded

DOC = Path(__file__).resolve().parents[2] / "docs" / "certification.md"
HEADER = "| field | required (default) | meaning | used by |"


def table() -> dict[str, list[str]]:
    lines = DOC.read_text().splitlines()
    start = lines.index(HEADER)
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("| `"):
            break
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert len(cells) == 4, line
        rows[cells[0].strip("`")] = cells[1:]
    return rows


def _required(f: dataclasses.Field, kind) -> bool:
    if f.default is not dataclasses.MISSING:
        default = f.default
    elif f.default_factory is not dataclasses.MISSING:
        default = f.default_factory()
    else:
        return True
    return default is not None and kind.problem(default) is not None


def _checks_named(cell: str) -> set[str]:
    named = set(re.findall(r"\b([A-Z]+-\d+)\b", cell))
    for area, first, last in re.findall(r"\b([A-Z]+)-(\d+) to [A-Z]+-(\d+)\b", cell):
        named |= {f"{area}-{n}" for n in range(int(first), int(last) + 1)}
    return named


def test_every_descriptor_field_has_a_row_in_order():
    fields = [f.name for f, _ in kinded(BackendDescriptor)]
    assert list(table()) == fields


def test_the_required_column_follows_the_fields_defaults():
    rows = table()
    for f, kind in kinded(BackendDescriptor):
        said = rows[f.name][0]
        assert said.startswith("yes") == _required(f, kind), f"{f.name}: the table says {said!r}"


def test_conditional_fields_are_the_capabilities_and_name_their_checks():
    rows = table()
    by_capability: dict[str, set[str]] = {}
    for c in all_checks():
        if c.applies_if:
            by_capability.setdefault(c.applies_if, set()).add(c.id)
    for f, kind in kinded(BackendDescriptor):
        required, _meaning, used_by = rows[f.name]
        capability = isinstance(kind, Nested) and kind.capability is not None
        assert ("conditional" in required) == capability, f"{f.name}: {required!r}"
        if capability:
            assert f"declares the `{f.name}` capability" in required, f.name
            assert _checks_named(used_by) == by_capability[f.name], f"{f.name}: {used_by!r}"


def test_the_used_by_column_names_only_checks_that_exist():
    ids = {c.id for c in all_checks()}
    for name, (_, _, used_by) in table().items():
        assert _checks_named(used_by) <= ids, f"{name}: {used_by!r}"


def test_runtime_libraries_says_what_reads_it():
    """It is not only for the report: RT-1, the packaging checks and --target read it."""
    _, meaning, used_by = table()["runtime_libraries"]
    assert {"RT-1", "PKG-5", "PKG-6", "PKG-7"} <= _checks_named(used_by) and "--target" in used_by
    assert "report" in used_by and "RT-1" in meaning
