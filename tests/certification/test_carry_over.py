"""A claim carries over a changed requirement (conformance/requirement_changes.py,
conformance/certification/carry_over.py): which failures it turns into warnings, judged from the released
check lists; the verdict; what verify accepts and refuses; and every previous report that cannot be a
claim refused with the reason."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from templates import EARLIER, finish, make_report, real_report

from conformance.certification.carry_over import CarryOverError, Claim, HandedClaim, carried, read_claim
from conformance.certification.verify import check_report
from conformance.released import releases
from conformance.report import verdict, write_report
from conformance.requirement_changes import TIGHTENED, grace, next_minor
from conformance.version import SUITE_VERSION

#: The certified report of the reference backend by suite 0.5.0 (a real run, tests/certification/data).
CERTIFIED_0_5_0 = next(p for p in EARLIER if p.name.endswith("0.5.0.json"))
#: The scoreboard's standard run of the reference backend by suite 0.5.0 (scoreboard/results).
#: the scoreboard's standard run of the reference backend by suite 0.5.0 (scoreboard/results/reference until
#: its row was run again with 0.6.0), kept here as it was written
STANDARD_0_5_0 = Path(__file__).parent / "data" / "reference-standard-0.5.0.json"


def _claim(outcomes: dict[str, str] | None = None, whole: bool = True, verdict_: str = "certified") -> Claim:
    return Claim("0.5.0", verdict_, "certify", "2026-12-02T00:00:00+00:00", "0" * 64, whole, outcomes or {})


def _failed(check_id: str, outcome: str = "failed", level: str = "MUST") -> dict:
    return {"id": check_id, "level": level, "outcome": outcome, "reason": f"{check_id} says no"}


def test_the_released_lists_give_each_change_and_its_window():
    released = releases()
    rt6 = grace("RT-6", "0.5.0", released, "0.6.0")
    assert (rt6.kind, rt6.since, rt6.failure_from) == ("tightened", "0.6.0", "0.7.0")
    assert rt6.what == next(t.what for t in TIGHTENED if t.check == "RT-6")
    rt8 = grace("RT-8", "0.2.0", released, "0.6.0")
    assert (rt8.kind, rt8.since, rt8.failure_from) == ("added", "0.6.0", "0.7.0")
    # a check added in 0.3.0 was noticed through the 0.3 series: from 0.4.0 on a failure counts
    assert grace("QNT-1", "0.2.0", released, "0.3.0").kind == "added"
    assert grace("QNT-1", "0.2.0", released, "0.6.0") is None
    # no change after the claim: nothing to carry
    assert grace("RT-1", "0.5.0", released, "0.6.0") is None
    assert grace("RT-8", "0.6.0", released, "0.6.0") is None
    assert next_minor("0.6.2") == "0.7.0" and next_minor("1.9.0") == "1.10.0"


def test_the_released_list_of_this_version_records_its_tightenings():
    written = {t.check for t in releases()[SUITE_VERSION].tightenings}
    assert written == {t.check for t in TIGHTENED if t.since == SUITE_VERSION}


def test_a_tightened_check_carries_only_what_the_claim_passed():
    note = carried(_failed("RT-6"), _claim({"RT-6": "passed"}), "0.6.0")
    assert note == {
        "from": "0.5.0",
        "change": "tightened",
        "since": "0.6.0",
        "failure_from": "0.7.0",
        "what": next(t.what for t in TIGHTENED if t.check == "RT-6"),
    }
    assert carried(_failed("RT-6"), _claim({"RT-6": "expected_failure"}), "0.6.0") is None
    assert carried(_failed("RT-6"), _claim({}), "0.6.0") is None  # the claim did not run it
    assert carried(_failed("RT-6"), _claim({"RT-6": "passed"}), "0.7.0") is None  # the notice is over


def test_an_added_check_carries_only_from_a_whole_conformant_claim():
    assert carried(_failed("RT-8"), _claim(), "0.6.0")["change"] == "added"
    assert carried(_failed("RT-8"), _claim(whole=False), "0.6.0") is None
    assert carried(_failed("RT-8"), _claim(verdict_="not conformant"), "0.6.0") is None


@pytest.mark.parametrize("outcome", ["crashed", "timed_out", "error", "not_run", "unexpected_pass"])
def test_only_a_must_failure_carries(outcome):
    assert carried(_failed("RT-8", outcome), _claim(), "0.6.0") is None
    assert carried(_failed("RT-8", level="SHOULD"), _claim(), "0.6.0") is None


def test_a_carried_failure_is_a_warning_naming_the_change_and_a_crash_is_not():
    rt8 = {**_failed("RT-8"), "carried_over": carried(_failed("RT-8"), _claim(), "0.6.0")}
    text, reasons, warnings = verdict([rt8, {**_failed("RT-1", "passed")}], certify=True)
    assert (text, reasons) == ("certified", [])
    assert warnings == [
        (
            "RT-8 failed, carried over from suite 0.5.0 (RT-8 is new in suite 0.6.0; added in 0.6.0, a failure "
            "from suite 0.7.0): RT-8 says no"
        )
    ]
    crashed = {**rt8, "outcome": "crashed"}  # a forged note on a crash changes nothing
    assert verdict([crashed], certify=True)[0] == "not conformant"


def _carrying_report(check_id: str = "RT-8", claim_version: str = "0.5.0") -> dict:
    report = make_report()
    report["previous_report"] = {**_claim().to_dict(), "suite_version": claim_version}
    for r in report["results"]:
        if r["id"] == check_id:
            r.update(outcome="failed", reason="execute() wrote into input 0")
            r["carried_over"] = carried(r, _claim(), SUITE_VERSION) or {
                "from": "0.5.0",
                "change": "added",
                "since": SUITE_VERSION,
                "failure_from": next_minor(SUITE_VERSION),
                "what": "forged",
            }
    return finish(report)


def test_verify_accepts_a_carried_failure_the_released_lists_allow():
    result = check_report(_carrying_report())
    assert result.problems == [] and result.verdict == "certified"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        # the claim is named, but the check did not change after it (RT-1: no change since 0.5.0)
        (lambda r: _carrying_report("RT-1"), "the released check lists give no change in this minor series"),
        # no claim named at all
        (lambda r: finish({k: v for k, v in r.items() if k != "previous_report"}), "names no released claim"),
        # a claim of a release that never was
        (
            lambda r: finish({**r, "previous_report": {**r["previous_report"], "suite_version": "0.4.9"}}),
            "previous_report is of suite '0.4.9', which was never released",
        ),
        # the window moved: a failure from 0.9.0
        (
            lambda r: finish(
                {
                    **r,
                    "results": [
                        {**x, "carried_over": {**x["carried_over"], "failure_from": "0.9.0"}}
                        if "carried_over" in x
                        else x
                        for x in r["results"]
                    ],
                }
            ),
            "says added in 0.6.0, a failure from 0.9.0",
        ),
    ],
)
def test_verify_refuses_a_carried_failure_the_released_lists_do_not_allow(change, problem):
    result = check_report(change(_carrying_report()))
    assert any(problem in p for p in result.problems), result.problems
    assert result.verdict == "certified"  # the note is refused, not believed: verify fails the report


def _write(tmp_path, data: dict, name: str = "previous.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


def test_a_real_certified_report_of_an_earlier_release_is_a_claim(tmp_path):
    claim = read_claim(CERTIFIED_0_5_0, "ReferenceBackend", True, SUITE_VERSION)
    assert (claim.suite_version, claim.verdict, claim.mode, claim.whole) == (
        "0.5.0",
        "certified",
        "certify",
        True,
    )
    assert claim.outcomes["RT-6"] == "passed" and "RT-8" not in claim.outcomes
    assert len(claim.sha256) == 64
    # what 0.6.0 changed is carried over from this claim: RT-6 made stricter, RT-8 added
    assert carried(_failed("RT-6"), claim, "0.6.0")["change"] == "tightened"
    assert carried(_failed("RT-8"), claim, "0.6.0")["change"] == "added"


def test_a_previous_report_that_cannot_be_a_claim_is_refused_with_the_reason(tmp_path):
    earlier = json.loads(CERTIFIED_0_5_0.read_text())
    cases = {
        "of backend 'ReferenceBackend', not 'OtherBackend'": (CERTIFIED_0_5_0, "OtherBackend", True),
        f"was written by suite {SUITE_VERSION}, not by a release before this suite": (
            write_report(real_report(), tmp_path / "now.json") and tmp_path / "now.json",
            "ReferenceBackend",
            False,
        ),
        "does not verify: content hash mismatch": (
            _write(tmp_path, {**copy.deepcopy(earlier), "verdict": "conformant"}, "edited.json"),
            "ReferenceBackend",
            False,
        ),
        "is not JSON": (_write(tmp_path, {}, "x.json").with_name("x.json"), "ReferenceBackend", False),
        "is a directory": (tmp_path, "ReferenceBackend", False),
    }
    (tmp_path / "x.json").write_text("{not json")
    for expected, (path, backend, certify) in cases.items():
        with pytest.raises(CarryOverError) as caught:
            read_claim(path, backend, certify, SUITE_VERSION)
        assert expected in str(caught.value) and str(path) in str(caught.value), str(caught.value)
    # the scoreboard's standard run of the reference backend by suite 0.5.0: a claim, but not for certify
    assert read_claim(STANDARD_0_5_0, "ReferenceBackend", False, SUITE_VERSION).verdict == "conformant"
    with pytest.raises(CarryOverError, match="a certify run carries over only a certified report"):
        read_claim(STANDARD_0_5_0, "ReferenceBackend", True, SUITE_VERSION)


def test_a_refusal_names_the_option_as_the_user_spelled_it():
    """Under plain pytest the option is --et-previous-report: the message says that, not the CLI's name."""
    with pytest.raises(CarryOverError) as caught:
        read_claim(CERTIFIED_0_5_0, "OtherBackend", True, SUITE_VERSION, "--et-previous-report")
    assert str(caught.value).startswith("--et-previous-report: the previous report "), str(caught.value)
    assert "--previous-report:" not in str(caught.value).replace("--et-previous-report", "")


def test_a_claim_the_cli_read_is_handed_to_its_run_for_that_report_only():
    """executorch-conformance run reads and verifies the previous report before any check runs, and hands
    the claim to the pytest run it starts: the plugin takes it for the same path and reads nothing again."""
    claim = read_claim(CERTIFIED_0_5_0, "ReferenceBackend", True, SUITE_VERSION)
    plugins = [object(), HandedClaim(str(CERTIFIED_0_5_0), claim)]
    assert len(set(plugins)) == 2  # a plugin object must hash: pluggy keeps them in a set
    assert HandedClaim.find(plugins, str(CERTIFIED_0_5_0)) is claim
    assert HandedClaim.find(plugins, str(STANDARD_0_5_0)) is None  # another report: the plugin reads it
    assert HandedClaim.find([object()], str(CERTIFIED_0_5_0)) is None
