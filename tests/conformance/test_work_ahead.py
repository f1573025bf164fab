"""Work started ahead (``Context.ahead``, ``Check.ahead``): NDATA-5's program of gigabytes is made in a vendor
process of its own while the other checks run. What it makes, and its crash or its hang, are the check's, as
if made when the check asked; a run that ends first stops it. The backends that crash and hang really do
(``broken_backends.descriptors``: a SIGSEGV, a sleep of an hour in the partitioner)."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from suite_runner import results_by_id, run_suite

from conformance.context import Context
from conformance.descriptor import load_descriptor
from conformance.large_weights import ENV, LAYERS
from conformance.outcomes import VendorCrashed, VendorTimedOut
from conformance.vendor.task_registry import LARGE_WEIGHTS

BROKEN = Path(__file__).parent / "broken"
KEY = ("large_weights", 1 << 20)
WHAT = "lowering the large-weights program"


@pytest.fixture
def context(monkeypatch):
    """make(spec, timeout): a Context of ``spec``, closed after the test."""
    monkeypatch.syspath_prepend(str(BROKEN))
    made: list[Context] = []

    def make(spec: str, timeout: float = 120.0) -> Context:
        ctx = Context(load_descriptor(spec), spec, timeout=timeout, lowering_cache=None)
        made.append(ctx)
        return ctx

    yield make
    for ctx in made:
        ctx.close()


def _start(ctx: Context, out: Path) -> None:
    ctx.ahead(KEY, LARGE_WEIGHTS, KEY[1], str(out), what=WHAT)
    ctx.start_check("NDATA-5")


def _made_again() -> None:
    pytest.fail("made again although it was started ahead")


def test_what_was_made_ahead_is_what_the_check_gets_with_its_lowering_time(context, tmp_path):
    ctx = context("ReferenceBackend")
    _start(ctx, tmp_path / "lw")
    flow = ctx.shared(KEY, _made_again)
    assert flow["delegated"] == LAYERS and list(flow["files"]) == ["reference_weights.ptd"]
    assert Path(flow["files"]["reference_weights.ptd"]).stat().st_size > KEY[1]
    recorded = dict(ctx.properties["NDATA-5"])
    assert float(recorded["lowering_s"]) > 0 and recorded["made_ahead"] == "1", recorded
    assert ctx.shared(KEY, _made_again) is flow
    assert ctx.vendor._pool is None  # the run's own vendor process never lowered it


def test_a_crash_ahead_is_the_checks_failure_each_time_it_is_asked_for(context, tmp_path):
    ctx = context("broken_backends.descriptors:CRASHES_LOWERING_LARGE_WEIGHTS")
    _start(ctx, tmp_path / "lw")
    for _ in range(2):
        with pytest.raises(VendorCrashed, match=r"crashed with SIGSEGV in .*large-weights program"):
            ctx.shared(KEY, _made_again)


def test_a_hang_ahead_times_out_as_the_checks_own(context, tmp_path):
    ctx = context("broken_backends.descriptors:HANGS_LOWERING_LARGE_WEIGHTS", timeout=10.0)
    _start(ctx, tmp_path / "lw")
    with pytest.raises(VendorTimedOut, match=r"timed out after 10 s in .*large-weights program"):
        ctx.shared(KEY, _made_again)


def test_a_run_that_ends_first_stops_what_it_started_ahead(context, tmp_path):
    ctx = context("broken_backends.descriptors:HANGS_LOWERING_LARGE_WEIGHTS", timeout=3600.0)
    _start(ctx, tmp_path / "lw")
    deadline = time.monotonic() + 600  # until the task runs (it reaches the partitioner that sleeps an hour)
    pid_files: list[Path] = []
    while not pid_files and time.monotonic() < deadline:
        pid_files = list((ctx.scratch_dir() / "ahead-1").glob("task-*.log.pid"))
        time.sleep(0.2)
    pid = int(pid_files[0].read_text())
    ctx.close()
    status = Path(f"/proc/{pid}/status")
    assert not status.exists() or "State:\tZ" in status.read_text(), status.read_text()


@pytest.mark.full  # 1 GiB of weights: NDATA-5 is started ahead when the run begins, and runs last
def test_a_run_starts_ndata5_ahead_and_runs_it_last(tmp_path):
    code, report, output = run_suite(
        tmp_path, "ReferenceBackend", "--checks", "NDATA,AOT-1", env={ENV: "1GiB"}
    )
    assert code == 0, output
    results = results_by_id(report)
    assert [r["id"] for r in report["results"]] == ["AOT-1", *(f"NDATA-{i}" for i in range(1, 6))]
    assert results["NDATA-5"]["outcome"] == "passed", results["NDATA-5"]
    cases = list(ET.parse(tmp_path / "junit.xml").getroot().iter("testcase"))  # noqa: S314  the suite's own output
    ran = [str(c.get("name")) for c in cases]
    assert ran[-1].endswith("[NDATA-5]"), ran
    properties = {p.get("name"): p.get("value") for p in cases[-1].iter("property")}
    assert properties.get("made_ahead") == "1", properties


@pytest.mark.full  # a timeout of 45 s: generous for the other checks on a busy machine
def test_a_hang_ahead_fails_ndata5_and_the_other_checks_pass(tmp_path):
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:HANGS_LOWERING_LARGE_WEIGHTS",
        "--checks",
        "NDATA",
        "--timeout",
        "45",
        env={ENV: "1GiB"},
    )
    assert report is not None, output
    results = results_by_id(report)
    assert results["NDATA-5"]["outcome"] == "timed_out", results["NDATA-5"]
    assert "timed out after" in results["NDATA-5"]["reason"], results["NDATA-5"]
    assert {i: r["outcome"] for i, r in results.items() if i != "NDATA-5"} == dict.fromkeys(
        ("NDATA-1", "NDATA-2", "NDATA-3", "NDATA-4"), "passed"
    )
    assert code != 0


def test_work_ahead_takes_the_process_kept_warm_for_it_and_a_warm_process_left_over_is_closed(
    context, tmp_path
):
    """``executorch-conformance run`` starts NDATA-5's vendor process while the backend is described
    (``prepare(warm_huge_pages=True)``) and the Context takes it (``keep_warm``): the program is made in
    that process, and a warm process no work takes is closed with the Context."""
    from conformance.vendor.process import VendorProcess

    ctx = context("ReferenceBackend")
    warm = VendorProcess("ReferenceBackend", huge_pages=True)
    warm.warm_up()
    ctx.keep_warm(warm)
    ctx.ahead(KEY, LARGE_WEIGHTS, KEY[1], str(tmp_path / "lw"), what=WHAT, huge_pages=True)
    ctx.start_check("NDATA-5")
    flow = ctx.shared(KEY, _made_again)
    assert flow["delegated"] == LAYERS
    assert warm.step_seconds.get("lowering", 0) > 0  # made in the warm process, which is closed after it
    assert warm._pool is None
    unused = VendorProcess("ReferenceBackend")
    unused.warm_up()
    ctx.keep_warm(unused)  # kept for work without huge pages, which never comes
    ctx.close()
    assert unused._pool is None


def test_the_run_starts_a_warm_process_only_for_a_program_it_makes_ahead(monkeypatch):
    from conformance.checks import named_data

    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setattr(named_data, "_memory_for_vendor", lambda memory_bytes: 64 << 30)
    assert named_data.makes_program_ahead(None, None)  # every check: NDATA-5's 4.25 GiB
    assert named_data.makes_program_ahead(frozenset({"NDATA"}), None)
    assert not named_data.makes_program_ahead(frozenset({"RT-1", "OPS"}), None)  # not selected
    monkeypatch.setenv(ENV, "16MiB")
    assert not named_data.makes_program_ahead(None, None)  # too small to be made ahead
    monkeypatch.delenv(ENV)
    monkeypatch.setattr(named_data, "_memory_for_vendor", lambda memory_bytes: 1 << 30)
    assert not named_data.makes_program_ahead(None, None)  # the machine cannot hold it: the check says so


def test_a_warm_process_is_stopped_when_the_backend_cannot_be_described(monkeypatch, tmp_path):
    import multiprocessing

    from conformance.descriptor import DescriptorError
    from conformance.vendor.launch import WORKER_NAME
    from conformance.vendor.remote_descriptor import prepare

    def workers() -> set[int]:
        return {c.pid for c in multiprocessing.active_children() if c.name.startswith(WORKER_NAME) and c.pid}

    before = workers()
    with pytest.raises(DescriptorError):
        prepare("no_such_module:DESCRIPTOR", tmp_path / "vendor.log", 120.0, warm_huge_pages=True)
    assert workers() - before == set()
    prepared = prepare("ReferenceBackend", tmp_path / "vendor.log", 120.0, warm_huge_pages=True)
    try:
        assert prepared.take_warm("OtherBackend") is None
        warm = prepared.take_warm("ReferenceBackend")
        assert warm is not None and warm.huge_pages and prepared.take_warm("ReferenceBackend") is None
        warm.close()
    finally:
        prepared.discard()
