"""report.json's JSON Schema (conformance/schemas/report.schema.json): real reports validate with plain
jsonschema, broken ones are refused with the JSON path of what is wrong, and the schema is held to the
typed report (conformance/report/records.py) and to docs/report-schema.md."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import jsonschema
import pytest

from conformance.cli import main
from conformance.operators.case_outcomes import FIELDS as CASE_FIELDS
from conformance.outcomes import OUTCOMES
from conformance.report import Backend, OperatorRow, Options, Report, Result, json_fields, seal
from conformance.report.schema import load_schema, structure_problems

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
REPORTS = sorted(DATA.glob("reference-certify-*.json"))
SCHEMA_DOC = REPO / "docs" / "report-schema.md"

MODEL_ROW = {"model": "mlp", "family": "mlp", "result": "matched", "reason": "", "nodes": 3}


@pytest.fixture(scope="module")
def schema() -> dict:
    return load_schema()


@pytest.fixture
def real() -> dict:
    return json.loads((DATA / "reference-certify-0.5.0.json").read_text())


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_every_committed_report_validates_with_plain_jsonschema(schema, path):
    jsonschema.Draft202012Validator.check_schema(schema)
    report = json.loads(path.read_text())
    jsonschema.validate(report, schema, cls=jsonschema.Draft202012Validator)
    assert structure_problems(report) == []


def test_a_report_with_a_models_section_validates(real):
    """The defect class: a section the typed check never met (the model tier's rows were required to hold
    a 'name' no row has) made verify refuse a real report."""
    real["models"] = [MODEL_ROW]
    assert structure_problems(real) == []
    assert Report.from_dict(seal(real)).models == [MODEL_ROW]


def _drop(key):
    def edit(r):
        del r[key]

    return edit


BROKEN = [
    ("a missing top-level field", _drop("results"), "field 'results' is missing"),
    (
        "a mistyped nested field",
        lambda r: r["results"][2].update(outcome=3),
        "field 'results[2].outcome' is an integer, not a string",
    ),
    (
        "a bool as a count",
        lambda r: r["operators"][1].update(passed=True),
        "field 'operators[1].passed' is a boolean, not an integer",
    ),
    ("a float as a count", lambda r: r["summary"].update(passed=35.0), "field 'summary.passed' is a number"),
    ("a negative count", lambda r: r["operators"][0].update(ran=-1), "field 'operators[0].ran' is negative"),
    (
        "an unknown summary key",
        lambda r: r["summary"].update(great=1),
        "field 'summary.great' is not an outcome or 'total'",
    ),
    (
        "a case row of the wrong shape",
        lambda r: r["operators"][4]["case_results"][3].update(ran="yes"),
        "field 'operators[4].case_results[3].ran' is a string, not a boolean",
    ),
    (
        "a case row without its key",
        lambda r: r["operators"][4]["case_results"][0].pop("key"),
        "field 'operators[4].case_results[0].key' is missing",
    ),
    (
        "case rows dropped (required from schema 3)",
        lambda r: r["operators"][3].pop("case_results"),
        "field 'operators[3].case_results' is missing",
    ),
    (
        "a library digest that is not one",
        lambda r: r["backend"]["runtime_libraries"][0].update(sha256="ABC"),
        "field 'backend.runtime_libraries[0].sha256' is not a SHA-256 (64 lowercase hex digits)",
    ),
    ("NaN as a duration", lambda r: r.update(duration_s=float("nan")), "field 'duration_s' is nan"),
    ("a list as options", lambda r: r.update(options=["x"]), "field 'options' is a list, not an object"),
    (
        "an options field missing",
        lambda r: r["options"].pop("workers"),
        "field 'options.workers' is missing",
    ),
    (
        "a model row without its name",
        lambda r: r.update(models=[{"result": "matched"}]),
        "field 'models[0].model' is missing",
    ),
    ("a string as warnings", lambda r: r.update(warnings="none"), "field 'warnings' is a string, not a list"),
]


#: Refused by the suite's stricter number types only: JSON Schema calls 35.0 an integer, and JSON has no NaN.
STRICTER = {"a float as a count", "NaN as a duration"}


@pytest.mark.parametrize(("what", "edit", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_report_is_refused_naming_the_json_path(schema, real, what, edit, message):
    edit(real)
    if what not in STRICTER:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(real, schema, cls=jsonschema.Draft202012Validator)
    problems = structure_problems(real)
    assert any(p.startswith(message) for p in problems), problems


def test_an_older_schema_version_cannot_drop_a_field_its_suite_requires(real):
    """verify validates as the version the report's suite writes, not the one the report claims."""
    del real["selected"]
    real["schema_version"] = 1
    assert structure_problems(real) == []  # as schema 1 says
    assert "field 'selected' is missing" in structure_problems(real, 3)


def test_verify_prints_the_paths_and_no_traceback(real, tmp_path, capsys):
    real["results"][2]["outcome"] = 3
    real["operators"][4]["case_results"][3]["ran"] = "yes"
    path = tmp_path / "report.json"
    path.write_text(json.dumps(seal(real)))
    code = main(["verify", str(path)])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 1 and "Traceback" not in text
    assert "field 'results[2].outcome' is an integer, not a string" in text
    assert "field 'operators[4].case_results[3].ran' is a string, not a boolean" in text


def test_the_schema_knows_every_field_the_typed_report_writes(schema):
    defs = schema["$defs"]
    sections = [
        (Report, schema["properties"]),
        (Backend, defs["backend"]["properties"]),
        (Result, defs["result"]["properties"]),
        (Options, defs["options"]["properties"]),
        (OperatorRow, defs["operator"]["properties"]),
    ]
    for cls, properties in sections:
        missing = set(json_fields(cls)) - set(properties)
        assert not missing, f"{cls.__name__}: {sorted(missing)} not in report.schema.json"
    assert defs["case"]["required"] == list(CASE_FIELDS)
    assert schema["properties"]["summary"]["propertyNames"]["enum"] == [*OUTCOMES, "total"]


def test_the_docs_link_the_schema_and_list_its_top_level_fields(schema):
    text = SCHEMA_DOC.read_text()
    assert "conformance/schemas/report.schema.json" in text
    section = text.split("## Top-level fields", 1)[1].split("\n### ", 1)[0]
    documented = set(re.findall(r"^\| `([a-z_0-9]+)` \|", section, re.MULTILINE))
    assert documented == set(schema["properties"]), sorted(documented ^ set(schema["properties"]))
    required = set(schema["required"]) | set(schema["allOf"][0]["then"]["required"])
    for field in required:
        row = re.search(rf"^\| `{field}` \|[^|]*\| (yes[^|]*) \|", section, re.MULTILINE)
        assert row, f"docs/report-schema.md does not say {field} is required"


def test_the_schema_ships_in_the_package():
    from importlib import resources

    assert resources.files("conformance.schemas").joinpath("report.schema.json").is_file()
    assert dataclasses.is_dataclass(Report)


def test_a_flood_of_results_is_refused_at_once(real):
    """Each item costs jsonschema time: the size bounds are checked first, so a report of 20,000 results
    (no suite has 1,000 checks) is refused in well under a second instead of being walked item by item."""
    import time

    extra = [dict(real["results"][0], id=f"AOT-{i}") for i in range(100, 20100)]
    flooded = {**real, "results": real["results"] + extra}
    started = time.monotonic()
    problems = structure_problems(flooded)
    assert time.monotonic() - started < 2, "the bounds were not checked first"
    held = len(flooded["results"])
    assert problems == [f"field 'results' holds {held} items, more than the 1000 a report can hold"]
