"""One result row, three spellings held together: the ``ResultRow`` TypedDict that the suite's code is
typed with (conformance/report/rows.py), the ``Result`` dataclass of the typed reader
(conformance/report/records.py) and the ``results[]`` object of the report's JSON Schema
(conformance/schemas/report.schema.json). A field added to, or dropped from, one of them alone fails
here. The same for the profile row (``ProfileRow``, ``profiles[]``)."""

from __future__ import annotations

import json
from typing import get_type_hints

from templates import REAL

from conformance.report import CarriedOver, ProfileRow, Result, ResultRow, json_fields, profile_verdicts
from conformance.report.schema import load_schema


def _result_schema() -> dict:
    return load_schema()["$defs"]["result"]


def test_the_row_has_the_keys_of_the_schema():
    schema = _result_schema()
    assert set(ResultRow.__required_keys__) == set(schema["required"])
    assert set(ResultRow.__required_keys__) | set(ResultRow.__optional_keys__) == set(schema["properties"])


def test_the_row_has_the_fields_of_the_typed_result():
    assert set(json_fields(Result)) == set(ResultRow.__required_keys__) | set(ResultRow.__optional_keys__)


def test_a_carried_over_note_has_the_keys_of_the_schema():
    schema = _result_schema()["properties"]["carried_over"]
    assert set(CarriedOver.__required_keys__) == set(schema["required"]) == set(schema["properties"])


def test_the_row_types_are_those_of_the_schema():
    """Each key's JSON type as the schema gives it, against the annotation of the TypedDict."""
    python = {"string": str, "number": float, "boolean": bool, "object": CarriedOver, "null": type(None)}
    hints = get_type_hints(ResultRow)
    for key, spec in _result_schema()["properties"].items():
        kinds = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
        expected = {python[k] for k in kinds}
        annotated = set(getattr(hints[key], "__args__", (hints[key],)))
        assert annotated == expected, key


def test_the_profile_row_has_the_keys_of_the_schema():
    schema = load_schema()["$defs"]["profile"]
    assert set(ProfileRow.__required_keys__) == set(schema["required"]) == set(schema["properties"])
    assert not ProfileRow.__optional_keys__


def test_the_profile_rows_computed_are_those_written():
    data = json.loads(REAL.read_text(encoding="utf-8"))
    computed: list[ProfileRow] = profile_verdicts(
        data["results"], data["mode"] == "certify", data["backend"]["capabilities"]
    )
    assert computed == data["profiles"]
    assert all(set(row) == set(ProfileRow.__required_keys__) for row in computed)


def test_a_written_row_reads_as_a_result_and_back():
    row: ResultRow = json.loads(REAL.read_text(encoding="utf-8"))["results"][0]
    assert Result.from_dict(row).to_dict() == row
