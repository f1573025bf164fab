"""junit-operators.xml mirrors the report's operators rows: failures, skips, counts; no OPS, no file."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from conformance.results.operator_junit import FILENAME, write_operators_junit

ROW = {
    "op": "aten::add.Tensor",
    "dtype": "float32",
    "cases": 3,
    "excluded": 0,
    "delegated": 3,
    "ran": 3,
    "passed": 2,
    "worst_error": 0.5,
    "tolerance_used": 12.5,
    "first_failing": None,
}


def test_rows_become_testcases_with_failures_and_skips(tmp_path):
    failing = dict(ROW, dtype="int32", first_failing={"case": "rank0", "reason": "output 0 differs: 1 vs 2"})
    empty = dict(
        ROW, op="aten::relu", cases=0, delegated=0, ran=0, passed=0, worst_error=None, tolerance_used=None
    )
    path = write_operators_junit({"operators": [ROW, failing, empty]}, tmp_path)
    root = ET.parse(path).getroot()  # noqa: S314  the writer's own output
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")
    cases = list(suite.iter("testcase"))
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("aten::add.Tensor", "float32"),
        ("aten::add.Tensor", "int32"),
        ("aten::relu", "float32"),
    ]
    assert cases[0].find("failure") is None and cases[0].find("skipped") is None
    assert cases[1].find("failure").get("message") == "case 'rank0': output 0 differs: 1 vs 2"
    assert cases[2].find("skipped") is not None
    props = {p.get("name"): p.get("value") for p in cases[0].iter("property")}
    assert props["passed"] == "2" and props["worst_error"] == "0.5"


def test_no_operator_rows_means_no_file_and_a_stale_one_is_removed(tmp_path):
    (tmp_path / FILENAME).write_text("stale")
    assert write_operators_junit({"results": []}, tmp_path) is None
    assert not (tmp_path / FILENAME).exists()


def test_case_rows_become_one_testcase_each_with_their_outcome(tmp_path):
    from conformance.operators.case_outcomes import case_row

    def case(name, outcome, reason=None, delegated=True, ran=True):
        return case_row(
            "aten::relu",
            "float32",
            name,
            outcome,
            reason,
            excluded=outcome == "excluded",
            delegated=delegated,
            ran=ran,
        )

    rows = [
        dict(
            ROW,
            op="aten::relu",
            case_results=[
                case("rank0", "passed"),
                case("rank2", "failed_numerics", "output 0 differs"),
                case("size0", "excluded", "declared unsupported (without=empty)", delegated=False, ran=False),
                case("rank3", "crashed", "crashed with SIGSEGV in execute of ..."),
                case("rank4", "not_run", "not run: the execution of case 'rank3' ...", ran=False),
            ],
        )
    ]
    root = ET.parse(write_operators_junit({"operators": rows}, tmp_path)).getroot()  # noqa: S314
    suite = root.find("testsuite")
    assert [(suite.get(k)) for k in ("tests", "failures", "errors", "skipped")] == ["5", "1", "1", "2"]
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert {c.get("classname") for c in cases.values()} == {"aten::relu float32"}
    assert cases["rank0"].find("failure") is None and cases["rank0"].find("skipped") is None
    assert cases["rank2"].find("failure").text == "output 0 differs"
    assert cases["rank3"].find("error").get("message").startswith("crashed: crashed with SIGSEGV")
    assert cases["rank4"].find("skipped").get("message").startswith("not_run: not run: the execution")
    props = {p.get("name"): p.get("value") for p in cases["size0"].iter("property")}
    assert props["outcome"] == "excluded" and props["delegated"] == "False"
