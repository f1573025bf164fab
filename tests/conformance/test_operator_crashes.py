"""A backend that crashes or hangs in the operator corpus is judged case by case, and the run ends in a
bounded number of vendor-process starts (counted, not timed): the first crash of an operator names its
case and the rest of its cases are not run; a runtime that crashes on everything stops the phase after
isolation.CONSECUTIVE cases crashed in a row; one that crashes on some cases only has each of them named.

The runtimes are real: the misbehaving C++ backend (broken/runtime/misbehaving_backend.cpp) raises SIGSEGV or
sleeps forever in its execute, a partitioner of tests/operators/broken_operators.py reads address 0."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from suite_runner import BROKEN, results_by_id, run_suite

from conformance.certification.verify import check_report
from conformance.context import Context
from conformance.operators import case_outcomes as co
from conformance.operators import runner
from conformance.operators.isolation import CONSECUTIVE
from conformance.vendor.process import VendorProcess

# The full tier (CI; bash scripts/test.sh --full): the operator corpus against crashing and hanging runtimes
pytestmark = pytest.mark.full

OPERATORS = Path(__file__).parents[1] / "operators"
MISBEHAVING = "broken_backends.descriptors:MISBEHAVING"
#: generous: a lowering of a few dozen cases takes seconds, a minute on a machine with a load of 8
TIMEOUT_S = 90.0


@pytest.fixture
def context(monkeypatch, broken_runtime_dir):
    """make(spec, misbehave, ops, timeout): a Context whose vendor process has $MISBEHAVE set, running only
    ``ops`` of the corpus."""
    made = []
    for path in (str(BROKEN), str(OPERATORS)):
        monkeypatch.syspath_prepend(path)
    monkeypatch.setenv("BROKEN_RUNTIME_DIR", str(broken_runtime_dir))

    def make(spec: str, misbehave: str | None, ops: tuple[str, ...], timeout: float = TIMEOUT_S) -> Context:
        from conformance.descriptor import load_descriptor

        if misbehave is None:
            monkeypatch.delenv("MISBEHAVE", raising=False)
        else:
            monkeypatch.setenv("MISBEHAVE", misbehave)
        ctx = Context(load_descriptor(spec), spec, timeout=timeout)
        ctx.operator_selection = frozenset(ops)
        made.append(ctx)
        return ctx

    yield make
    for ctx in made:
        ctx.close()


def _rows(ctx: Context, execute: bool) -> dict[str, dict]:
    ctx.start_check("OPS-2" if execute else "OPS-1")
    found = runner.results(ctx, execute=execute)
    rows = runner.summary(ctx, found, execute)
    return {case["key"]: case for row in rows for case in row["case_results"]}


def _by_outcome(cases: dict[str, dict]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, case in cases.items():
        out.setdefault(case["outcome"], []).append(key)
    return out


def test_a_runtime_that_crashes_on_every_execute_stops_after_a_few_crashes(context):
    ops = ("aten::add.Tensor", "aten::sub.Tensor", "aten::mul.Tensor", "aten::relu")
    ctx = context(MISBEHAVING, "execute:segv", ops)
    cases = _rows(ctx, execute=True)
    outcomes = _by_outcome(cases)
    # Lowering is unaffected: every case the reference partitioner claims is delegated.
    assert set(outcomes) <= {co.CRASHED, co.NOT_RUN, co.EXCLUDED}, outcomes.keys()
    # One crash for the first batch, one for the first case of each operator run alone until CONSECUTIVE of
    # them crashed, then the phase stops.
    assert ctx.vendor.restarts == 1 + CONSECUTIVE, ctx.vendor.restarts
    crashed = outcomes[co.CRASHED]
    assert crashed == [f"{op}|float32|rank0" for op in ops[:CONSECUTIVE]], crashed
    for key in crashed:
        assert re.match(r"crashed with SIGSEGV in execute of .*case 'rank0'", cases[key]["reason"]), cases[
            key
        ]
        assert "MisbehavingBackend: execute is about to segv" in cases[key]["reason"]
        assert cases[key]["ran"] and cases[key]["delegated"]
    not_run = [cases[k] for k in outcomes[co.NOT_RUN]]
    assert len(not_run) > 40 and all(c["delegated"] and not c["ran"] for c in not_run)
    for case in not_run:
        if case["key"].startswith(ops[:CONSECUTIVE]):
            assert re.match(
                r"not run: the execution of case 'rank0' of this operator crashed with SIGSEGV",
                case["reason"],
            )
        else:
            assert re.match(
                r"not run: the execution of 3 operator cases in a row crashed or timed out",
                case["reason"],
            )


def test_a_runtime_that_crashes_on_some_cases_has_each_of_them_named(context):
    ops = ("aten::add.Tensor", "aten::relu")
    ctx = context(MISBEHAVING, "execute:segv-on-17", ops)
    cases = _rows(ctx, execute=True)
    outcomes = _by_outcome(cases)
    assert sorted(outcomes[co.CRASHED]) == [
        "aten::add.Tensor|float32|rank1_odd",
        "aten::relu|float32|rank1_odd",
    ]
    for key in outcomes[co.CRASHED]:
        assert "crashed with SIGSEGV in execute of" in cases[key]["reason"]
        assert "execute of a 17-element tensor is about to segv" in cases[key]["reason"]
    # The cases run before the crash of their operator passed; the rest of that operator is not run.
    assert len(outcomes[co.PASSED]) >= 6, outcomes
    assert set(outcomes) <= {co.PASSED, co.CRASHED, co.NOT_RUN, co.EXCLUDED}
    for key in outcomes[co.NOT_RUN]:
        assert "of case 'rank1_odd' of this operator crashed with SIGSEGV" in cases[key]["reason"], cases[key]
    # Bounded: a crash per batch part on the way to each crashing case, about log2(cases) per operator.
    assert ctx.vendor.restarts <= 2 * (2 + 5), ctx.vendor.restarts


@pytest.mark.parametrize(("fault", "step"), [("init:segv", "load"), ("destroy:segv", "destroy")])
def test_a_crash_in_load_or_destroy_stops_the_operator_after_its_first_case(context, fault, step):
    ctx = context(MISBEHAVING, fault, ("aten::relu",))
    cases = _rows(ctx, execute=True)
    outcomes = _by_outcome(cases)
    # The batch of the static cases, then its first case alone; the dynamic cases are not run.
    assert ctx.vendor.restarts == 2, ctx.vendor.restarts
    assert outcomes[co.CRASHED] == ["aten::relu|float32|rank0"], outcomes
    reason = cases["aten::relu|float32|rank0"]["reason"]
    assert re.match(rf"crashed with SIGSEGV in {step} of aten::relu float32 case 'rank0'", reason), reason
    assert set(outcomes) <= {co.CRASHED, co.NOT_RUN, co.EXCLUDED}


def test_a_runtime_that_hangs_in_execute_times_out_once_per_operator(context):
    ctx = context(MISBEHAVING, "execute:hang", ("aten::relu",), timeout=45.0)
    before = VendorProcess.starts
    cases = _rows(ctx, execute=True)
    starts = VendorProcess.starts - before
    outcomes = _by_outcome(cases)
    # The processes that lower at once, then a new one after the batch of the static cases timed out and one
    # after its first case alone did; the dynamic cases are not run.
    assert starts <= runner.LOWERING_PROCESSES + 2, starts
    assert outcomes[co.TIMED_OUT] == ["aten::relu|float32|rank0"], outcomes
    reason = cases["aten::relu|float32|rank0"]["reason"]
    # (on a machine so busy that the new process takes minutes to start, the start-up limit meets the hang)
    assert re.match(
        r"timed out after 45 s in execute of aten::relu float32 case 'rank0'|the vendor process did not start",
        reason,
    ), reason
    assert set(outcomes) <= {co.TIMED_OUT, co.NOT_RUN, co.EXCLUDED}
    assert all(
        "of case 'rank0' of this operator timed out" in cases[k]["reason"] for k in outcomes[co.NOT_RUN]
    )


def test_a_partitioner_that_crashes_on_some_cases_fails_ops1_naming_each(context):
    ctx = context("broken_operators:LOWERING_SEGV_ON_17", None, ("aten::add.Tensor", "aten::relu"))
    before = VendorProcess.starts
    cases = _rows(ctx, execute=False)
    starts = VendorProcess.starts - before
    outcomes = _by_outcome(cases)
    assert sorted(outcomes[co.CRASHED]) == [
        "aten::add.Tensor|float32|rank1_odd",
        "aten::relu|float32|rank1_odd",
    ]
    for key in outcomes[co.CRASHED]:
        assert re.match(
            r"lowering failed: crashed with SIGSEGV in _SegfaultsOn17Elements\.partition\(\)",
            cases[key]["reason"],
        )
        assert not cases[key]["delegated"]
    assert set(outcomes) <= {co.NOT_RUN, co.CRASHED, co.EXCLUDED}, outcomes.keys()
    # OPS-1 did not execute: the delegated cases are not run for that reason; the rest after the crash.
    reasons = {cases[k]["reason"].split(";")[0] for k in outcomes[co.NOT_RUN]}
    assert "delegated" in reasons, reasons
    assert any("lowering of case 'rank1_odd' of this operator crashed with SIGSEGV" in r for r in reasons), (
        reasons
    )
    # Bounded: the processes that lower at once, then a start per crash on the way to each crashing case.
    assert starts <= runner.LOWERING_PROCESSES + 2 * (2 + 5), starts


def test_a_crash_in_execute_is_in_the_report_the_junit_file_and_verifies(tmp_path, broken_runtime_dir):
    code, report, output = run_suite(
        tmp_path,
        MISBEHAVING,
        "--checks",
        "OPS",
        "--ops",
        "aten::relu,aten::linear",
        "--timeout",
        str(TIMEOUT_S),
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir), "MISBEHAVE": "execute:segv"},
    )
    assert report is not None, output
    results = results_by_id(report)
    assert results["OPS-1"]["outcome"] == "passed", results["OPS-1"]
    assert results["OPS-2"]["outcome"] == "failed", results["OPS-2"]
    assert re.search(
        r"of \d+ operator cases failed on the runtime \(aten::linear float32, aten::relu float32\): "
        r"aten::relu float32 case 'rank0' .*: crashed with SIGSEGV in execute of",
        results["OPS-2"]["reason"],
    ), results["OPS-2"]["reason"]
    assert re.search(
        r"; \d+ delegated cases were not run after a crash or timeout", results["OPS-2"]["reason"]
    )
    assert code == 1 and report["verdict"] == "not conformant"
    verification = check_report(report)
    assert verification.problems == [], verification.problems
    rows = {row["op"]: row for row in report["operators"]}
    relu = {c["case"]: c for c in rows["aten::relu"]["case_results"]}
    assert len(relu) == rows["aten::relu"]["cases"] == 16
    assert relu["rank0"]["outcome"] == co.CRASHED and rows["aten::relu"]["first_failing"]["case"] == "rank0"
    assert {c["outcome"] for name, c in relu.items() if name != "rank0"} <= {co.NOT_RUN, co.EXCLUDED}
    suite = ET.parse(tmp_path / "junit-operators.xml").getroot().find("testsuite")  # noqa: S314  our own output
    testcases = list(suite.iter("testcase"))
    assert len(testcases) == sum(row["cases"] for row in report["operators"] if row["cases"])
    crashed = [t for t in testcases if t.find("error") is not None]
    assert [(t.get("classname"), t.get("name")) for t in crashed] == [
        ("aten::relu float32", "rank0"),
        ("aten::linear float32", "rank2_bias"),
    ]
    assert crashed[0].find("error").get("message").startswith("crashed: crashed with SIGSEGV in execute of")
    assert suite.get("errors") == "2" and suite.get("failures") == "0"
    assert int(suite.get("skipped")) == len(testcases) - 2
