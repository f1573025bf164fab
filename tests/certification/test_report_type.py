"""The typed Report of conformance/report/records.py: the reports the suite wrote read back into it and write out
as the same bytes; a dict of the wrong shape is refused with the problems verify prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from templates import EARLIER, REAL

from conformance.report import Report, ReportTypeError, write_report

ROOT = Path(__file__).parents[2]
WRITTEN = [REAL, *EARLIER, *sorted((ROOT / "matrix" / "results").glob("*/report.json"))]


@pytest.mark.parametrize("path", WRITTEN, ids=[str(p.relative_to(ROOT)) for p in WRITTEN])
def test_a_written_report_reads_into_a_report_and_writes_the_same_bytes(path, tmp_path):
    data = json.loads(path.read_text(encoding="utf-8"))
    report = Report.from_dict(data)
    assert report.to_dict() == data
    assert report.computed_verdict() == (data["verdict"], data["verdict_reasons"], data["warnings"])
    written = write_report(report, tmp_path / "report.json")
    assert written["content_sha256"] == data["content_sha256"]
    assert (tmp_path / "report.json").read_bytes() == path.read_bytes()


def test_unknown_fields_are_kept_and_absent_ones_stay_absent():
    data = json.loads(REAL.read_text(encoding="utf-8"))
    data["lab"] = {"name": "anyone"}
    data["results"][0]["note"] = "kept"
    del data["results"][0]["duration_s"]
    del data["backend"]["installed_version"]
    assert Report.from_dict(data).to_dict() == data


def test_a_result_marked_not_simulated_is_written_back_as_read():
    """The suite writes ``simulated`` only when true, but the schema allows false: a report that has it reads
    and writes as the same JSON, like any other field, so its content hash stays the same."""
    data = json.loads(REAL.read_text(encoding="utf-8"))
    data["results"][0]["simulated"] = False
    data["results"][1]["simulated"] = True
    assert Report.from_dict(data).to_dict() == data


def test_a_dict_of_the_wrong_shape_raises_the_problems_verify_reports():
    data = json.loads(REAL.read_text(encoding="utf-8"))
    data["results"][2]["outcome"] = 3
    data["options"] = ["ReferenceBackend"]
    with pytest.raises(ReportTypeError) as caught:
        Report.from_dict(data)
    assert caught.value.problems == [
        "field 'results[2].outcome' is an integer, not a string",
        "field 'options' is a list, not an object",
    ]
    with pytest.raises(ReportTypeError, match="holds a JSON list, not a report object"):
        Report.from_dict([])
