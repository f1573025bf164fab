"""verify is authoritative about content: forged reports, resealed so that the
content hash matches, are rejected with a reason naming what is wrong."""

from __future__ import annotations

import copy
import datetime
import json

import pytest
from templates import finish, make_report

from conformance.certification.verify import check_report, verify_report
from conformance.checks import all_checks
from conformance.descriptor import CAPABILITY_ABSENT
from conformance.released import releases
from conformance.report import seal
from conformance.version import REPORT_SCHEMA_VERSION, SUITE_VERSION

#: How many checks the suite has (a certify report holds each once).
N = len(all_checks())
LAST = all_checks()[-1].id


def problems_of(report, **kw) -> list[str]:
    return check_report(report, **kw).problems


def forged(report, fn, recompute=False):
    """A copy changed by fn; resealed, and with summary and verdict recomputed when ``recompute``."""
    changed = copy.deepcopy(report)
    changed.pop("content_sha256")
    fn(changed)
    return finish(changed) if recompute else seal(changed)


def result(report, check_id):
    return next(r for r in report["results"] if r["id"] == check_id)


def test_the_template_report_verifies_and_prints_its_verdict(report):
    v = check_report(report)
    assert v.ok and v.verdict == "certified"
    assert v.verdict_line().startswith(
        f"CERTIFIED (certify mode): {len(report['results'])}/{len(report['results'])} passed"
    )


def _fail(report, check_id="RT-3", reason="output differs"):
    result(report, check_id).update(outcome="failed", reason=reason)


def _set(path, value):
    def fn(r):
        obj = r
        for key in path[:-1]:
            obj = obj[key] if not isinstance(key, str) or not key.startswith("#") else result(r, key[1:])
        obj[path[-1]] = value

    return fn


def _drop(check_id):
    def fn(r):
        r["results"] = [x for x in r["results"] if x["id"] != check_id]
        r["selected"] = [x for x in r["selected"] if x != check_id]

    return fn


def _add_fake(r):
    r["results"].append(dict(r["results"][-1], id="PKG-9", clause="C-PKG-9", title="a check no suite has"))
    r["selected"].append("PKG-9")


def _duplicate(r):
    r["results"].insert(1, copy.deepcopy(r["results"][0]))


def _forgery_24_of_24(r):
    r.update(results=[], suite_version="0.1.99")
    r["backend"]["id"] = "SomeoneElsesBackend"


def _relabel_should(r):
    _fail(r)
    result(r, "RT-3")["level"] = "SHOULD"


def _xfail(r):
    result(r, "RT-3").update(outcome="expected_failure", reason="known issue")


def _declared_na(r):
    result(r, "AOT-1").update(outcome="not_applicable", reason="declared")


def _empty(r):
    r["results"], r["selected"] = [], []


# (name, edit, recompute summary and verdict like a careful forger, expected substring of a problem)
FORGERIES = [
    (
        "outcome edited, summary kept",
        lambda r: _fail(r),
        False,
        f"summary.passed is {N}, but {N - 1} results are passed",
    ),
    ("outcome edited, verdict kept", lambda r: _fail(r), False, "claims verdict 'certified'"),
    (
        "failing MUST relabelled SHOULD",
        _relabel_should,
        True,
        f"results[13] (RT-3): level is 'SHOULD', but suite {SUITE_VERSION} has 'MUST' for RT-3",
    ),
    ("level edited", _set(("results", "#PKG-3", "level"), "MUST"), True, "(PKG-3): level is 'MUST'"),
    (
        "clause edited",
        _set(("results", "#RT-5", "clause"), "C-RT-4"),
        True,
        f"(RT-5): clause is 'C-RT-4', but suite {SUITE_VERSION} has 'C-RT-5'",
    ),
    ("title edited", _set(("results", "#RT-3", "title"), "anything"), True, "(RT-3): title is 'anything'"),
    (
        "applies_if edited",
        _set(("results", "#RT-3", "applies_if"), "named_data"),
        True,
        f"(RT-3): applies_if is 'named_data', but suite {SUITE_VERSION} has None",
    ),
    (
        "applies_if removed from a conditional check",
        _set(("results", "#NDATA-1", "applies_if"), None),
        True,
        f"(NDATA-1): applies_if is None, but suite {SUITE_VERSION} has 'named_data'",
    ),
    (
        "check dropped",
        _drop("RT-5"),
        True,
        f"certify mode needs every check of suite {SUITE_VERSION}, but the report lacks RT-5",
    ),
    ("check added", _add_fake, True, f"results[{N}]: 'PKG-9' is not a check of suite {SUITE_VERSION}"),
    ("duplicated check id", _duplicate, True, "check AOT-1 appears 2 times in results"),
    (
        "summary 999/999",
        lambda r: r["summary"].update(passed=999, total=999),
        False,
        f"summary.total is 999, but the report has {N} results",
    ),
    ("empty results", _empty, True, "results is empty"),
    (
        "results [] with summary 24/24, suite 0.1.99, renamed backend",
        _forgery_24_of_24,
        False,
        "suite version '0.1.99' was never released (released versions: 0.1.0, 0.2.0, 0.3.0, 0.4.0, 0.5.0, 0.6.0)",
    ),
    (
        "unreleased version",
        _set(("suite_version",), "0.7.0"),
        True,
        "suite version '0.7.0' was never released",
    ),
    (
        "certify report with an expected failure",
        _xfail,
        True,
        "certify mode forbids expected failures, but RT-3 is one (known issue)",
    ),
    (
        "certify report with a declared not-applicable MUST check, still certified",
        _declared_na,
        False,
        "the report claims verdict 'certified' (certified=True), its results give 'not conformant'",
    ),
    ("results reordered", lambda r: r["results"].reverse(), True, "results are not in check order"),
    (
        "unknown outcome",
        _set(("results", "#AOT-2", "outcome"), "skipped"),
        False,
        "unknown outcome 'skipped'",
    ),
    (
        "verdict reasons edited",
        lambda r: (_fail(r), finish(r), r.update(verdict_reasons=[])),
        False,
        "verdict_reasons differ from what the results give",
    ),
    (
        "schema version of another suite version",
        _set(("schema_version",), 1),
        True,
        f"schema_version is 1, but suite {SUITE_VERSION} writes schema_version {REPORT_SCHEMA_VERSION}",
    ),
    ("mode neither certify nor standard", _set(("mode",), "gold"), True, "mode is 'gold'"),
    (
        "options.certify disagrees with mode",
        _set(("options", "certify"), False),
        True,
        "options.certify is False but mode is 'certify'",
    ),
    (
        "certify with options.checks",
        _set(("options", "checks"), "PKG"),
        True,
        "certify mode runs every check, but options.checks is 'PKG'",
    ),
    (
        "selected lists a check without result",
        lambda r: (r["results"].pop(), None),
        True,
        f"selected {LAST}, but the results lack them",
    ),
    (
        "unknown capability",
        _set(("backend", "capabilities"), ["named_data", "quantum"]),
        True,
        "backend.capabilities names 'quantum'",
    ),
    (
        "created before the release",
        _set(("created",), "2026-01-01T00:00:00+00:00"),
        True,
        f"created 2026-01-01, before suite version {SUITE_VERSION} was released",
    ),
    (
        "created in the future",
        _set(("created",), "2027-06-01T00:00:00+00:00"),
        True,
        "which is in the future",
    ),
    ("created without a time zone", _set(("created",), "2026-12-01T10:00:00"), True, "has no time zone"),
]


@pytest.mark.parametrize(("name", "fn", "recompute", "expected"), FORGERIES, ids=[f[0] for f in FORGERIES])
def test_forged_report_is_rejected_with_the_reason(report, name, fn, recompute, expected):
    problems = problems_of(forged(report, fn, recompute), today=datetime.date(2026, 12, 1))
    assert any(expected in p for p in problems), problems


def test_an_edit_without_resealing_is_an_edit(report):
    edited = copy.deepcopy(report)
    result(edited, "AOT-1")["reason"] = "x"
    assert any(
        "content hash mismatch" in p and "edited after it was written" in p for p in verify_report(edited)
    )


def test_the_summary_is_compared_with_the_results_even_when_consistent_with_itself(report):
    forgery = forged(report, lambda r: r["summary"].update(passed=999, total=999))
    problems = verify_report(forgery)
    assert f"summary.passed is 999, but {N} results are passed" in problems


def test_a_standard_run_of_some_checks_verifies_and_its_selection_must_match(edit):
    report = make_report("standard", checks="PKG,BLOB")
    assert check_report(report).ok and check_report(report).verdict == "conformant"
    more = edit(report, lambda r: r["options"].update(checks="PKG"))
    assert "selected holds BLOB-1, BLOB-2, which options.checks 'PKG' does not select" in verify_report(more)
    hidden = edit(report, lambda r: (r["results"].pop(0), r["selected"].pop(0), finish(r)))
    hidden = finish(hidden)
    assert "options.checks 'PKG,BLOB' selects BLOB-1, which selected lacks" in verify_report(hidden)


def test_a_failing_standard_report_verifies_with_verdict_not_conformant():
    report = make_report("standard")
    report = forged(report, lambda r: _fail(r), recompute=True)
    v = check_report(report)
    assert v.ok and v.verdict == "not conformant"
    assert v.verdict_line().startswith(f"NOT CONFORMANT (standard mode): {N - 1}/{N} passed")


def test_waived_and_exempt_checks_are_counted():
    report = make_report("standard")

    def waive(r):
        _xfail(r)
        _declared_na(r)
        r["backend"]["capabilities"].remove("named_data")
        for x in r["results"]:
            if x["applies_if"] == "named_data":
                x.update(outcome="not_applicable", reason=CAPABILITY_ABSENT["named_data"])

    v = check_report(forged(report, waive, recompute=True))
    # named_data exempts NDATA-1 to NDATA-5 and MTH-2
    assert v.ok and v.verdict == "conformant" and (v.waived, v.exempt) == (2, 6)
    assert v.verdict_line().startswith(f"CONFORMANT (standard mode): {N - 8}/{N} passed, 2 waived, 6 exempt")


def test_backend_without_named_data_is_exempt_in_certify_mode(report):
    def exempt(r):
        r["backend"]["capabilities"].remove("named_data")
        for x in r["results"]:
            if x["applies_if"] == "named_data":
                x.update(outcome="not_applicable", reason=CAPABILITY_ABSENT["named_data"])

    assert check_report(forged(report, exempt, recompute=True)).verdict == "certified"

    # Declaring the capability and then not running its checks is not certified.
    def declared_not_run(r):
        for x in r["results"]:
            if x["applies_if"] == "named_data":
                x.update(outcome="not_applicable", reason="the descriptor declares no runtime for this host")

    declared = forged(report, declared_not_run, True)
    assert check_report(declared).ok and check_report(declared).verdict == "not conformant"
    claimed = forged(declared, lambda r: r.update(verdict="certified", certified=True, verdict_reasons=[]))
    assert any("its results give 'not conformant'" in p for p in verify_report(claimed))


def test_a_certify_run_that_failed_verifies_as_not_conformant(report):
    failing = forged(report, lambda r: _fail(r), recompute=True)
    v = check_report(failing)
    assert v.ok and v.verdict == "not conformant" and v.certify


def test_expired_suite_version_is_rejected(report):
    valid_until = releases()[SUITE_VERSION].valid_until
    assert verify_report(report, today=valid_until) == []
    (problem,) = verify_report(report, today=valid_until + datetime.timedelta(days=1))
    assert problem.startswith(
        f"suite version {SUITE_VERSION} was valid until {valid_until}; its reports have expired"
    )


def test_a_report_of_the_previous_release_verifies_in_its_window():
    old = releases()["0.1.0"]
    results = [dict(c, outcome="passed", reason="") for c in old.checks.values()]
    report = seal(
        {
            "schema": "executorch-conformance-report",
            "schema_version": 1,
            "suite_version": "0.1.0",
            "created": "2026-11-30T12:00:00+00:00",
            "command": "executorch-conformance run --certify",
            "mode": "certify",
            "environment": {"executorch": "1.5.1"},
            "backend": {
                "id": "B",
                "distribution": "b",
                "version": "1.0",
                "capabilities": ["named_data"],
                "runtime_libraries": [],
            },
            "results": results,
            "summary": {
                "passed": len(results),
                "failed": 0,
                "error": 0,
                "not_applicable": 0,
                "expected_failure": 0,
                "unexpected_pass": 0,
                "total": len(results),
            },
            "verdict": "certified",
            "certified": True,
        }
    )
    assert verify_report(report, today=datetime.date(2026, 12, 1)) == []
    assert any(
        "suite version 0.1.0 was valid until 2027-06-01" in p
        for p in verify_report(report, today=datetime.date(2027, 6, 2))
    )
    from conformance.certification.attestation import library_problems

    del report["backend"]["runtime_libraries"]  # optional in schema 1
    assert library_problems(report, __file__)[1] == [
        "--library test_verify.py: the report records no runtime library"
    ]
    report = seal({k: v for k, v in report.items() if k != "content_sha256"})
    assert verify_report(report, today=datetime.date(2026, 12, 1)) == []
    created_late = seal(dict(report, created="2027-06-02T00:00:00+00:00"))
    assert any(
        "after suite version 0.1.0 stopped being valid" in p
        for p in verify_report(created_late, today=datetime.date(2027, 6, 2))
    )


def test_the_committed_matrix_reports_verify():
    """Real reports written by released suite versions are held to that version's check list."""
    import json
    from pathlib import Path

    paths = sorted((Path(__file__).parents[2] / "matrix" / "results").glob("*/report.json"))
    assert paths
    for path in paths:
        report = json.loads(path.read_text())
        assert report["suite_version"] in ("0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0"), path
        v = check_report(report, today=datetime.date(2026, 12, 1))
        assert v.ok, (path, v.problems)


def test_a_certification_of_the_previous_suite_version_verifies_inside_its_window():
    """Suite 0.3.0's certify report stays certified until 0.3.0's last day (six months after 0.4.0), and
    is held to 0.3.0's corpus, not to today's."""
    from templates import EARLIER

    report = json.loads(EARLIER[0].read_text(encoding="utf-8"))
    assert report["suite_version"] == "0.3.0"
    v = check_report(report, today=datetime.date(2027, 6, 1))
    assert v.ok and v.verdict == "certified", v.problems
    late = check_report(report, today=datetime.date(2027, 6, 2))
    assert not late.ok and any("0.3.0" in p and "2027-06-01" in p for p in late.problems), late.problems


def test_an_interrupted_report_claiming_conformance_is_rejected():
    from templates import make_report

    from conformance.report import seal

    report = make_report(mode="standard", checks="PKG")
    forged = seal({**{k: v for k, v in report.items() if k != "content_sha256"}, "interrupted": True})
    problems = verify_report(forged)
    assert any("claims verdict 'conformant'" in p and "give 'not conformant'" in p for p in problems), (
        problems
    )
    typed = seal({**{k: v for k, v in report.items() if k != "content_sha256"}, "interrupted": "no"})
    assert any("field 'interrupted' is" in p for p in verify_report(typed))


def test_a_report_whose_rows_hold_a_non_finite_error_is_written_as_json_that_verifies(tmp_path):
    """A case whose output is NaN where eager PyTorch's is not has an infinite error: the report holds
    null there (JSON has no Infinity), so verify reads it; its reason says what was wrong."""
    from conformance.certification.verify import verify_file
    from conformance.report import write_report

    report = make_report()
    from conformance.models.architectures import MODELS
    from conformance.models.runner import new_row

    row = {
        **new_row(MODELS["m5"]),
        "result": "mismatch",
        "reason": "output 0 is NaN at index (0, 3) in the backend only",
    }
    report["models"] = [{**row, "max_abs_error": float("inf"), "tolerance_used": float("nan")}]
    written = write_report(report, tmp_path / "report.json")
    assert written["models"][0]["max_abs_error"] is None and written["models"][0]["tolerance_used"] is None
    assert "Infinity" not in (tmp_path / "report.json").read_text()
    assert verify_file(tmp_path / "report.json") == []
