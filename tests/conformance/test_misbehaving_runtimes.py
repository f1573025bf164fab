"""A runtime that crashes or hangs never takes the suite down and never
certifies: each fault fails the checks that met it, with the signal or the
timeout, the step and the runtime's last log line, in both modes (in-process
pytest and xdist workers), and the report still holds every selected check."""

from __future__ import annotations

import json
import re
import time

import pytest
from suite_runner import results_by_id, run_suite

#: The checks each fault run selects (by id, so that a new RT check does not change what a fault meets;
#: RT-8 and RT-9 load and execute too, and are left out to keep each run's length).
SELECTED_IDS = ["RT-1", "RT-2", "RT-3", "RT-4", "RT-5", "RT-6", "RT-7", "NDATA-3"]
SELECTED = ",".join(SELECTED_IDS)
#: The hang cases wait this long for each hanging check. Generous: the first check of a run also does the
#: shared lowering within it, which takes many seconds on a loaded machine.
TIMEOUT_S = 40
#: How long a vendor process restart may add to a timed-out check (importing torch again, under load).
RESTART_S = 90
LOGGED = r"the runtime logged: .*MisbehavingBackend: {where} is about to {how}"

# MISBEHAVE -> {check: (outcome, pattern of its reason)}; every other selected check passes.
CASES = {
    "init:segv": {
        c: ("crashed", r"crashed with SIGSEGV in load of .*" + LOGGED.format(where="init", how="segv"))
        for c in ("RT-3", "RT-4", "RT-5", "NDATA-3")
    },
    "execute:segv": {
        c: ("crashed", r"crashed with SIGSEGV in execute of .*" + LOGGED.format(where="execute", how="segv"))
        for c in ("RT-3", "RT-4", "NDATA-3")
    },
    "execute:abort": {
        c: ("crashed", r"crashed with SIGABRT in execute of .*" + LOGGED.format(where="execute", how="abort"))
        for c in ("RT-3", "RT-4", "NDATA-3")
    },
    # the suite frees each Method it loaded before the task ends: the runtime's destroy() runs under a
    # step of its own
    "destroy:segv": {
        c: (
            "crashed",
            r"crashed with SIGSEGV in destroy of .* \(the loaded methods freed\); "
            + LOGGED.format(where="destroy", how="segv"),
        )
        for c in ("RT-3", "RT-4", "NDATA-3")
    },
    "init:hang": {
        c: ("timed_out", r"timed out after [\d.]+ s in load of .*" + LOGGED.format(where="init", how="hang"))
        for c in ("RT-3", "RT-4", "RT-5", "NDATA-3")
    },
    "execute:hang": {
        c: (
            "timed_out",
            r"timed out after [\d.]+ s in execute of .*" + LOGGED.format(where="execute", how="hang"),
        )
        for c in ("RT-3", "RT-4", "NDATA-3")
    },
}
#: Checks of the selection the misbehaving backend does not declare the capability of: RT-7 (its runtime
#: has another id than the reference rules name, so it declares no acceptance rules).
EXEMPT = {"RT-7"}


#: The fault of the default tier (in-process); every other fault, and every fault under xdist, runs in the full
#: tier (CI; bash scripts/test.sh --full): the hang cases wait out real timeouts.
DEFAULT_TIER = ("execute:segv", "1")


@pytest.mark.parametrize(
    ("fault", "workers"),
    [
        pytest.param(
            fault,
            workers,
            id=f"{fault}-{label}",
            marks=() if (fault, workers) == DEFAULT_TIER else pytest.mark.full,
        )
        for fault in CASES
        for workers, label in (("1", "in-process"), ("2", "xdist"))
    ],
)
def test_fault_fails_the_checks_that_met_it(tmp_path, broken_runtime_dir, fault, workers):
    started = time.monotonic()
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:MISBEHAVING",
        "--checks",
        SELECTED,
        "-n",
        workers,
        "--timeout",
        str(TIMEOUT_S),
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir), "MISBEHAVE": fault},
    )
    elapsed = time.monotonic() - started
    assert report is not None, output
    assert report["selected"] == SELECTED_IDS and [r["id"] for r in report["results"]] == SELECTED_IDS
    results = results_by_id(report)
    for check_id, result in results.items():
        if check_id in CASES[fault]:
            outcome, pattern = CASES[fault][check_id]
            assert result["outcome"] == outcome, result
            assert re.search(pattern, result["reason"]), result["reason"]
            if outcome == "timed_out":  # the check ends within its timeout plus the restart of the process
                assert result["duration_s"] < TIMEOUT_S + RESTART_S, result
        elif check_id in EXEMPT:
            assert result["outcome"] == "not_applicable", result
        else:
            assert result["outcome"] == "passed", result
    assert code == 1, output
    # What multiprocessing's resource tracker says of a killed vendor process goes to output.log too.
    assert "resource_tracker" not in output, output
    assert report["verdict"] == "not conformant" and not report["certified"]
    assert report["summary"][CASES[fault][next(iter(CASES[fault]))][0]] == len(CASES[fault])
    badge = json.loads((tmp_path / "badge.json").read_text())
    assert badge["message"].startswith("not conformant"), badge
    # Bounded: the faulty checks' timeouts, process restarts and the rest of the run.
    assert elapsed < len(CASES[fault]) * (TIMEOUT_S + RESTART_S) + 300, elapsed


#: Runtimes that keep memory: MISBEHAVE -> RT-9's reason (misbehaving_backend.cpp keeps 1 MiB per call).
LEAKS = {
    "execute:leak": (
        r"memory allocated by the C allocator grew by 10\d\.\d MiB over 100 executes of sample 'mlp', "
        r"10\d\d\.\d KiB per execute \(allowed: 64\.0 KiB per execute\): the runtime keeps what each execute "
        r"allocates"
    ),
    "init:leak": (
        r"memory allocated by the C allocator grew by 1\d\.\d MiB over 10 load/destroy cycles of sample "
        r"'mlp', 10\d\d\.\d KiB per load/destroy cycle .*: the runtime keeps what init\(\) allocates after "
        r"destroy\(\)"
    ),
}


@pytest.mark.full  # a whole run per leak: CI keeps execute:leak (tests/long_tier.py)
@pytest.mark.parametrize("fault", list(LEAKS))
def test_a_runtime_that_keeps_memory_fails_rt9_with_the_growth(tmp_path, broken_runtime_dir, fault):
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:MISBEHAVING",
        "--checks",
        "RT-1,RT-9",
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir), "MISBEHAVE": fault},
    )
    assert report is not None, output
    results = results_by_id(report)
    assert results["RT-1"]["outcome"] == "passed", results["RT-1"]
    assert results["RT-9"]["outcome"] == "failed", results["RT-9"]
    assert re.search(LEAKS[fault], results["RT-9"]["reason"]), results["RT-9"]["reason"]
    assert code == 1


#: Runtimes that are right alone and wrong on several threads at once: MISBEHAVE -> (RT-10's outcome, its
#: reason). RT-1 and RT-3 (one execute at a time) pass.
CONCURRENCY_FAULTS = {
    "execute:shared-scratch": (
        "failed",
        (
            r"under concurrency, \d[\d,]* of 1,600 executes \(8 threads each executing its own method 200 times at "
            r"once\) gave wrong outputs, which each gets alone: the first, execute \d+ of sample '\w+' on thread "
            r"\d \(input set \d\) output \d differs from eager PyTorch.*guard what they share with a lock \(C-RT-12\)"
        ),
    ),
    # a thread that never returns: the check times out like any other (the vendor process is stopped)
    "execute:hang": (
        "timed_out",
        r"timed out after [\d.]+ s in concurrent loads and executes of the samples \(8 threads x 200 executes\)",
    ),
    # a crash on one of the threads takes the vendor process down: the check crashed, naming the step
    "execute:segv": (
        "crashed",
        r"crashed with SIGSEGV in concurrent loads and executes of the samples \(8 threads x 200 executes\)",
    ),
}


@pytest.mark.full  # a whole run per fault: CI keeps execute:shared-scratch (tests/long_tier.py)
@pytest.mark.parametrize("fault", list(CONCURRENCY_FAULTS))
def test_a_runtime_wrong_under_concurrency_fails_rt10(tmp_path, broken_runtime_dir, fault):
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:MISBEHAVING",
        "--checks",
        "RT-1,RT-3,RT-10" if fault == "execute:shared-scratch" else "RT-1,RT-10",
        "--timeout",
        str(TIMEOUT_S),
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir), "MISBEHAVE": fault},
    )
    assert report is not None, output
    results = results_by_id(report)
    outcome, pattern = CONCURRENCY_FAULTS[fault]
    assert results["RT-1"]["outcome"] == "passed", results["RT-1"]
    if "RT-3" in results:
        assert results["RT-3"]["outcome"] == "passed", results["RT-3"]
    assert results["RT-10"]["outcome"] == outcome, results["RT-10"]
    assert re.search(pattern, results["RT-10"]["reason"], re.DOTALL), results["RT-10"]["reason"]
    assert code == 1 and report["verdict"] == "not conformant"


#: How long each init() of the slow runtime takes, and the check timeout it is judged under: RT-4 loads the
#: two samples twice each, 4 x SLOW_INIT_S = 32 s of init() against a 20 s timeout, which still leaves the
#: check's own work (executing and comparing) 20 s on a loaded machine.
SLOW_INIT_S, SLOW_TIMEOUT_S = 8, 20


@pytest.mark.full  # a whole run waiting out slow inits: CI keeps it (tests/long_tier.py)
def test_a_slow_init_is_not_charged_to_the_checks_timeout(tmp_path, broken_runtime_dir):
    """A correct runtime whose init() takes 8 s: RT-4's four loads take longer than its whole timeout, and
    it passes, since each load has the timeout of its own (C-RT-4, docs/contract.md). The report and the
    table show the check's init() time apart from its executes."""
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:MISBEHAVING",
        "--checks",
        "RT-1,RT-4",
        "--timeout",
        str(SLOW_TIMEOUT_S),
        env={
            "BROKEN_RUNTIME_DIR": str(broken_runtime_dir),
            "MISBEHAVE": "init:slow",
            "MISBEHAVE_SLOW_S": str(SLOW_INIT_S),
        },
    )
    assert report is not None, output
    results = results_by_id(report)
    assert results["RT-4"]["outcome"] == "passed", results["RT-4"]
    assert results["RT-4"]["duration_s"] > 4 * SLOW_INIT_S > SLOW_TIMEOUT_S, results["RT-4"]
    # the report says where the time went: the four init()s, apart from the executes
    assert results["RT-4"]["init_s"] >= 4 * SLOW_INIT_S > results["RT-4"]["execute_s"], results["RT-4"]
    # the table's "init s" column (after "s" and a "shared s" that may be blank)
    assert re.search(
        r"RT-4 +C-RT-4 +MUST +PASS +[\d.]+ +(?:[\d.]+ +)?(?:3[2-9]|[4-9]\d|\d{3,})\.\d\b", output
    ), output
    assert code == 0, output


@pytest.mark.full  # a whole run without a fault (CI keeps it; the default tier keeps execute:segv)
def test_the_same_runtime_without_a_fault_passes(tmp_path, broken_runtime_dir):
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:MISBEHAVING",
        "--checks",
        SELECTED,
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir)},
    )
    assert code == 0, output
    assert {r["outcome"] for r in report["results"] if r["id"] not in EXEMPT} == {"passed"}
    assert {r["id"]: r["outcome"] for r in report["results"] if r["id"] in EXEMPT} == {
        "RT-7": "not_applicable"
    }


# Faults met by RT-3 alone (RT-1 passes): MISBEHAVE -> (workers, extra options, RT-3's outcome, pattern).
MORE_FAULTS = {
    # pebble takes an exit with status 0 for a normal end: the suite watches the process itself
    "execute:exit0": ("1", (), "crashed", r"crashed with exit code 0 in execute of sample 'mlp'"),
    "execute:_exit0 (xdist)": ("2", (), "crashed", r"crashed with exit code 0 in execute of sample 'mlp'"),
    "init:quick_exit": ("1", (), "crashed", r"crashed with exit code 0 in load of sample 'mlp'"),
    # a line that imitates the suite's step markers names no step: the steps are kept apart from the log
    "execute:imitate-then-segv": (
        "1",
        (),
        "crashed",
        r"crashed with SIGSEGV in execute of sample 'mlp'; the runtime logged: .*about to imitate-then-segv",
    ),
    # allocates until stopped: a failed allocation in the vendor process, never the OOM killer
    "init:memory-bomb": (
        "1",
        ("--memory-limit", "2"),
        "crashed",
        r"crashed with SIGABRT in load of sample 'mlp'; the runtime logged: .*MisbehavingBackend: out of memory",
    ),
    # the runtime's destroy() runs when the suite frees the Method, under a step of its own
    "destroy:hang (xdist)": ("2", (), "timed_out", r"timed out after [\d.]+ s in destroy of sample 'mlp'"),
    # 300 MB of log lines, then the right outputs: the suite reads only the end of the log
    "execute:spew": ("1", (), "passed", r"^$"),
}


@pytest.mark.full  # a whole run per fault: the default tier keeps execute:segv (above) for the family
@pytest.mark.parametrize("case", list(MORE_FAULTS))
def test_more_faults_fail_rt3_with_the_right_reason(tmp_path, broken_runtime_dir, case):
    workers, extra, outcome, pattern = MORE_FAULTS[case]
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:MISBEHAVING",
        "--checks",
        "RT-1,RT-3",
        "-n",
        workers,
        "--timeout",
        str(TIMEOUT_S),
        *extra,
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir), "MISBEHAVE": case.split(" ")[0]},
    )
    assert report is not None, output
    results = results_by_id(report)
    assert results["RT-1"]["outcome"] == "passed", results["RT-1"]
    assert results["RT-3"]["outcome"] == outcome, results["RT-3"]
    assert re.search(pattern, results["RT-3"]["reason"]), results["RT-3"]["reason"]
    assert results["RT-3"]["duration_s"] < TIMEOUT_S + RESTART_S, results["RT-3"]
    assert (code, report["verdict"]) == ((0, "conformant") if outcome == "passed" else (1, "not conformant"))
    assert "Traceback" not in output and "INTERNALERROR" not in output


@pytest.mark.full  # a whole run with a fault: full tier
def test_a_runtime_that_writes_into_the_suites_pipes_costs_only_its_own_check(tmp_path, broken_runtime_dir):
    """execute() writes junk into every open descriptor, the pipes to the suite among them: RT-3 times out,
    and the next check runs in a new process with new pipes instead of waiting for a broken pool."""
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:MISBEHAVING",
        "--checks",
        "RT-1,RT-3,RT-5",
        "--timeout",
        str(TIMEOUT_S),
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir), "MISBEHAVE": "execute:garbage-to-fds"},
    )
    assert report is not None, output
    results = results_by_id(report)
    assert [results[c]["outcome"] for c in ("RT-1", "RT-3", "RT-5")] == ["passed", "timed_out", "passed"]
    assert results["RT-5"]["duration_s"] < 60, results["RT-5"]
    assert code == 1 and report["verdict"] == "not conformant"


@pytest.mark.full  # a whole run with a fault: full tier
def test_a_runtime_thread_that_aborts_between_tasks_fails_the_check_that_meets_it(
    tmp_path, broken_runtime_dir
):
    """init() starts a thread that calls std::terminate two seconds later, while the vendor process may be
    idle: the check that meets the dead process crashes naming what happened and the last step before it
    (never 'the check itself failed', which would blame the suite), and the run is not conformant."""
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:MISBEHAVING",
        "--checks",
        SELECTED,
        "--timeout",
        str(TIMEOUT_S),
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir), "MISBEHAVE": "init:later-terminate"},
    )
    assert code == 1 and report is not None, output
    assert report["verdict"] == "not conformant" and not report["certified"]
    assert not [r for r in report["results"] if r["outcome"] == "error"], report["results"]
    crashed = [r for r in report["results"] if r["outcome"] == "crashed"]
    assert crashed, report["results"]
    for result in crashed:  # the thread fires while a task runs, or between tasks
        assert re.search(
            r"died while it ran no task, after .+; the runtime logged: .*terminate called|"
            r"crashed with SIGABRT in ",
            result["reason"],
        ), result


@pytest.mark.full  # a whole run with a fault: full tier
def test_a_runtime_thread_that_kills_the_process_after_the_last_task_is_a_crash(tmp_path, broken_runtime_dir):
    """init() starts a thread that kills the vendor process (SIGKILL) once the runtime has had no call for
    a second: after the run's last task, when no later check meets the dead process. The last liveness
    check does: the check that ran last crashes, naming it, and the run is not conformant."""
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:MISBEHAVING",
        "--checks",
        "RT-5",
        "--timeout",
        str(TIMEOUT_S),
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir), "MISBEHAVE": "init:kill-when-idle"},
    )
    assert report is not None, output
    (result,) = report["results"]
    assert result["outcome"] == "crashed", result
    assert re.search(
        r"^the vendor process did not stay alive after the run's last task: the vendor process died while it "
        r"ran no task, after ",
        result["reason"],
    ), result
    assert code == 1 and report["verdict"] == "not conformant"
    assert any("RT-5 crashed: the vendor process did not stay alive" in r for r in report["verdict_reasons"])
