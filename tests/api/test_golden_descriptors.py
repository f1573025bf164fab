"""Golden vendor descriptors of every released suite version (tests/api/golden/suite_*/) give today the
judgement their suite gave them (issue 29), or a deprecation warning naming what to change, never a
crash or a silently different verdict.

``recorded.json`` next to the modules holds what the suite of each release said (recorded by
tests/api/golden/record.py with that release's own suite code against the reference backend);
``differences.json`` lists each outcome that differs today, with the reason, and the tests hold
today's run to it. The default tier loads every golden descriptor in a vendor process, as a run does
(its capabilities, its deprecation warnings, its errors) and runs the cheap check AOT-1; the full tier
runs each as it was run then and compares every outcome."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.certification.verify import check_report
from conformance.checks import all_checks
from conformance.context import Context
from conformance.descriptor import DescriptorError
from conformance.testing import Options, run_suite
from conformance.vendor.process import VendorProcess
from conformance.vendor.remote_descriptor import describe

# The full tier (CI; bash scripts/test.sh --full): whole suite runs of the golden descriptors of earlier releases
pytestmark = pytest.mark.full

GOLDEN = Path(__file__).parent / "golden"
RUNS = [
    run
    for path in sorted(GOLDEN.glob("suite_*/recorded.json"))
    for run in json.loads(path.read_text())["runs"]
]
DIFFERENCES = json.loads((GOLDEN / "differences.json").read_text())["differences"]
SPECS = sorted({run["spec"] for run in RUNS})
#: the descriptors today's suite refuses, with the error it must give (names the descriptor, the field, the value)
REFUSED = {
    "suite_0_4_0.mixed:MISNAMED": (
        "suite_0_4_0.mixed:MISNAMED: operators {'relu': ['float32']}: operator 'relu' is not a schema name such "
        "as 'aten::add.Tensor'"
    ),
}
#: the descriptors that use a deprecated form besides supported_ops itself, with the value the warning names
DEPRECATED = {"suite_0_2_0.getitem:DESCRIPTOR": "'<built-in function getitem>'"}
#: how the deprecation every golden descriptor that loads meets since 0.6.0 starts (each gives supported_ops,
#: or is a copy of one that does); it is listed after the others
GIVEN = "supported_ops is given ("
TIMEOUT = 900.0


def _short(commit: str) -> str:
    return commit[:7]


def _differences(spec: str, commit: str) -> dict[str, dict]:
    return {d["check"]: d for d in DIFFERENCES if d["spec"] == spec and _short(d["commit"]) == _short(commit)}


def _expected(run: dict) -> tuple[str | None, dict[str, str]]:
    """(verdict, check id -> outcome) today's suite must give for the options of ``run``."""
    diffs = _differences(run["spec"], run["commit"])
    if "verdict" in run:
        verdict, outcomes = run["verdict"], dict(run["outcomes"])
    else:  # the suite of then refused the descriptor: the differences say what a run gives today
        load = diffs["(load)"]
        if load["now"] == "refused":
            return None, {}
        like = next(
            r
            for r in RUNS
            if r["spec"] == load["like"]["spec"] and _short(r["commit"]) == load["like"]["commit"]
        )
        wanted = {c.strip() for c in (run["checks"] or "").split(",") if c.strip()}
        verdict = like["verdict"]
        outcomes = {
            i: o
            for i, o in like["outcomes"].items()
            if not wanted or i in wanted or i.split("-")[0] in wanted
        }
    for check, d in diffs.items():
        if check == "(verdict)":
            verdict = d["now"]
        elif check != "(load)":
            outcomes[check] = d["now"]
    return verdict, outcomes


def test_every_recorded_run_names_its_command_and_release():
    assert len(SPECS) >= 8 and {run["suite_version"] for run in RUNS} >= {"0.2.0", "0.3.0", "0.4.0"}
    for run in RUNS:
        assert run["command"].startswith("python tests/api/golden/record.py --commit ")
        assert "verdict" in run or "error" in run
    for d in DIFFERENCES:
        assert d["why"] and any(
            r["spec"] == d["spec"] and _short(r["commit"]) == d["commit"] for r in RUNS
        ), d


def test_the_measured_breaks_are_in_the_recorded_data():
    """What issue 29 measured, as the old suites said it."""
    by = {(r["spec"], _short(r["commit"])): r for r in RUNS}
    getitem = by["suite_0_2_0.getitem:DESCRIPTOR", "5acfa98"]
    assert (
        "raised ValueError: operator '<built-in function getitem>' is not a schema name" in getitem["error"]
    )
    assert by["suite_0_2_0.getitem:DESCRIPTOR", "eba1ef7"]["verdict"] == "conformant"
    assert by["suite_0_2_0.narrowed:NARROWED", "eba1ef7"]["outcomes"]["AOT-4"] == "failed"
    assert by["suite_0_2_0.narrowed:NARROWED", "5acfa98"]["outcomes"]["AOT-4"] == "passed"  # the false pass
    assert by["suite_0_4_0.narrowed:NARROWED", "d6d05fe"]["outcomes"]["AOT-4"] == "passed"
    assert (
        "raised DescriptorError: operators: operator 'relu'"
        in by["suite_0_4_0.mixed:GOOD", "d6d05fe"]["error"]
    )


@pytest.mark.parametrize("spec", SPECS)
def test_golden_descriptor_loads_as_its_release_read_it(spec, tmp_path):
    vendor = VendorProcess(spec, None, tmp_path / "vendor.log")
    try:
        if spec in REFUSED:
            with pytest.raises(DescriptorError) as err:
                describe(spec, vendor, TIMEOUT)
            assert str(err.value) == REFUSED[spec]
            return
        descriptor, _text = describe(spec, vendor, TIMEOUT)
        loaded = [r for r in RUNS if r["spec"] == spec and "verdict" in r]
        for run in loaded:
            assert descriptor.capabilities() == run["capabilities"], run["commit"]
        *others, given = descriptor.deprecations()
        assert (
            given.startswith(GIVEN)
            and "an error from suite 0.7.0; declare the operators in operators=" in given
        )
        if spec in DEPRECATED:
            (message,) = others
            assert f"supported_ops lists {DEPRECATED[spec]}, not an operator schema name" in message
            assert "an error from suite 0.7.0; remove it from supported_ops" in message
        else:
            assert others == []
        context = Context(descriptor, spec, TIMEOUT, tmp_path / "vendor.log", vendor=vendor)
        vendor = None  # the context owns it now
        try:
            (aot1,) = [c for c in all_checks() if c.id == "AOT-1"]
            context.start_check("AOT-1")
            aot1.run(context)
        finally:
            context.close()
        for run in RUNS:
            if run["spec"] == spec:
                assert _expected(run)[1].get("AOT-1", "passed") == "passed"
    finally:
        if vendor is not None:
            vendor.close()


def _run_today(spec: str, checks: str | None, tmp: Path) -> dict:
    """Today's suite, run as the recorded run ran (``conformance.testing.run_suite``: the CLI)."""
    # a generous limit per check: the golden runs go on a busy machine (a judgement, not a speed, is compared)
    return run_suite(spec, Options(checks=checks, certify=not checks, timeout=TIMEOUT * 2), tmp).to_dict()


#: (spec, checks) of every run today, each compared with every recorded run of those options
TODAY = sorted(
    {(r["spec"], r["checks"]) for r in RUNS if r["spec"] not in REFUSED}, key=lambda x: (x[0], x[1] or "")
)


@pytest.mark.full
@pytest.mark.parametrize(("spec", "checks"), TODAY, ids=[f"{s}-{c or 'certify'}" for s, c in TODAY])
def test_golden_descriptor_is_judged_as_its_release_judged_it(spec, checks, tmp_path):
    report = _run_today(spec, checks, tmp_path)
    got = {r["id"]: r["outcome"] for r in report["results"]}
    *others, given = report["deprecations"]
    assert given.startswith(GIVEN)
    if spec in DEPRECATED:
        (message,) = others
        assert DEPRECATED[spec] in message
        assert check_report(report).problems == []  # a report with deprecations verifies
    else:
        assert others == []
    compared = 0
    for run in RUNS:
        if run["spec"] != spec or run["checks"] != checks:
            continue
        verdict, outcomes = _expected(run)
        if verdict is None:
            continue
        where = f"{spec} as {run['suite_version']} ({_short(run['commit'])}) ran it"
        wrong = {i: (o, got.get(i)) for i, o in outcomes.items() if got.get(i) != o}
        assert not wrong, (
            f"{where}: outcomes differ (then, now) without a reason in differences.json: {wrong}"
        )
        assert report["verdict"] == verdict, f"{where}: verdict {verdict!r} then, {report['verdict']!r} now"
        compared += 1
    assert compared
