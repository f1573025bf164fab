"""verify recomputes each profile's verdict from the results: a report whose ``profiles`` claim more than
its results show is refused, naming the profile; a report without ``profiles`` (suite 0.5.0, or 0.6.0
written before profiles) still verifies, its profiles computed."""

from __future__ import annotations

import copy
import datetime
import json
from typing import Any

from templates import EARLIER, finish, make_report, real_report

from conformance.certification.report_problems import profile_problems
from conformance.certification.verify import check_report
from conformance.cli import main
from conformance.report import seal


def forged(report: dict[str, Any], fn) -> dict[str, Any]:
    """``report`` changed by ``fn`` and resealed as it is: summary and verdict left as the forger set them."""
    changed = copy.deepcopy(report)
    changed.pop("content_sha256")
    fn(changed)
    return seal(changed)


def entry(report: dict[str, Any], profile_id: str) -> dict[str, Any]:
    return next(p for p in report["profiles"] if p["id"] == profile_id)


def blob_1_failed(r: dict[str, Any]) -> None:
    next(x for x in r["results"] if x["id"] == "BLOB-1").update(outcome="failed", reason="no header")


def test_a_report_with_profiles_verifies_and_names_what_it_certifies():
    report = make_report()
    assert entry(report, "core")["verdict"] == "certified"
    v = check_report(report)
    assert v.ok, v.problems
    assert v.profiles == report["profiles"]
    assert v.profiles_line().endswith(
        "; certifies Core + Versioned blobs + Named data + Quantized + "
        "Dynamic shapes + Composition + Stateful programs"
    )


def test_a_forged_profile_claiming_what_its_results_fail_is_refused():
    failed = forged(make_report(), blob_1_failed)
    # The forger recomputes the overall verdict (not conformant) but claims the header profile anyway.
    claimed = forged(
        finish(copy.deepcopy(failed)),
        lambda r: entry(r, "versioned_blobs").update(verdict="certified", reasons=[]),
    )
    assert claimed["verdict"] == "not conformant"
    v = check_report(claimed)
    refused = "profiles claim Versioned blobs is 'certified', but its results give 'not conformant'"
    assert v.problems == [f"{refused}: BLOB-1 failed: no header"]
    assert "Versioned blobs not conformant" in v.profiles_line()
    # Core still passes: the report certifies Core and the other profiles, not the header one.
    honest_failed = finish(copy.deepcopy(failed))
    assert check_report(honest_failed).ok
    assert "certifies Core + Named data" in check_report(honest_failed).profiles_line()


def test_a_profile_left_out_added_or_edited_is_refused():
    report = make_report()
    dropped = forged(report, lambda r: r["profiles"].pop(2))
    assert check_report(dropped).problems == [
        "profiles lack Named data (named_data), whose checks the report holds: its results give 'certified'"
    ]
    added = forged(report, lambda r: r["profiles"].append({**r["profiles"][0], "id": "gold"}))
    assert check_report(added).problems == [
        "profiles name 'gold', which is no profile of the report's selected checks"
    ]
    twice = forged(report, lambda r: r["profiles"].append(r["profiles"][0]))
    assert check_report(twice).problems == ["profiles hold 'core' 2 times"]
    fewer = forged(report, lambda r: r["profiles"][0]["checks"].remove("RT-3"))
    (problem,) = check_report(fewer).problems
    assert problem.startswith("profiles entry 'core' differs from what the results give")
    swapped = forged(report, lambda r: r["profiles"].reverse())
    assert check_report(swapped).problems == [
        "profiles are not in the suite's order (conformance/profiles.py)"
    ]


def test_profile_problems_of_a_claim_with_no_results():
    assert profile_problems([], []) == []
    claim = [{"id": "core", "name": "Core", "checks": [], "verdict": "certified", "reasons": []}]
    assert profile_problems(claim, []) == [
        "profiles name 'core', which is no profile of the report's selected checks"
    ]


def test_a_report_without_profiles_verifies_with_its_profiles_computed():
    report = forged(make_report(), lambda r: r.pop("profiles"))
    v = check_report(report)
    assert v.ok, v.problems
    assert v.profiles == make_report()["profiles"]


def test_the_released_reports_of_suite_0_5_and_0_6_verify_and_get_profiles():
    old = json.loads(EARLIER[-1].read_text(encoding="utf-8"))
    assert old["suite_version"] == "0.5.0" and "profiles" not in old
    v = check_report(old, today=datetime.date(2026, 12, 3))
    assert v.ok, v.problems
    verdicts = {p["id"]: p["verdict"] for p in v.profiles}
    # 0.5.0 had no STATE checks: no Stateful programs entry; every other profile is certified
    assert verdicts == {
        "core": "certified",
        "versioned_blobs": "certified",
        "named_data": "certified",
        "quantized": "certified",
        "dynamic_shapes": "certified",
        "composition": "certified",
    }
    real = real_report()
    v = check_report(real, today=datetime.date(2026, 12, 3))
    assert v.ok, v.problems
    stateful = next(p for p in v.profiles if p["id"] == "stateful_programs")
    assert stateful["verdict"] == "not claimed"  # the reference backend declares no mutable_state


def test_verify_prints_the_profiles_and_refuses_a_forged_one(tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(finish(forged(make_report(), blob_1_failed))))
    assert main(["verify", str(good)]) == 0
    out = capsys.readouterr().out
    assert "  profiles: Core certified, Versioned blobs not conformant, Named data certified" in out
    assert "certifies Core + Named data + Quantized" in out
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            forged(
                json.loads(good.read_text()),
                lambda r: entry(r, "versioned_blobs").update(verdict="certified", reasons=[]),
            )
        )
    )
    assert main(["verify", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "REJECTED" in out and "profiles claim Versioned blobs is 'certified'" in out
