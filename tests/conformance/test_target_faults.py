"""A runtime that crashes or hangs behind the runner (the misbehaving test
backend linked into it, MISBEHAVE selecting the fault) fails the checks that
met it, crashed or timed out, with the step and the runtime's last log line;
the others pass, and the run goes on."""

from __future__ import annotations

import re
import sys
import time

import pytest
from check_outcomes import run_checks
from suite_runner import BROKEN

# The full tier (CI; bash scripts/test.sh --full): builds the C++ runner; faults on a target
pytestmark = pytest.mark.full

TIMEOUT_S = 4  # of the fault cases; the first (fault-free) case lowers the samples with a roomy timeout
WARM_UP_TIMEOUT_S = 120
LOGGED = r"the runtime logged: .*MisbehavingBackend: {where} is about to {how}"
SELECTED = ["RT-1", "RT-2", "RT-3", "RT-4", "RT-5", "RT-6"]
CASES = {
    "execute:segv": {
        c: ("crashed", r"crashed with SIGSEGV in execute of .*" + LOGGED.format(where="execute", how="segv"))
        for c in ("RT-3", "RT-4")
    },
    "init:abort": {
        c: ("crashed", r"crashed with SIGABRT in load of .*" + LOGGED.format(where="init", how="abort"))
        for c in ("RT-3", "RT-4", "RT-5")
    },
    # the backend prints a line that imitates a step: the runner's steps are in a file of their own
    "execute:imitate-then-segv": {
        c: (
            "crashed",
            r"crashed with SIGSEGV in execute of .*"
            + LOGGED.format(where="execute", how="imitate-then-segv"),
        )
        for c in ("RT-3", "RT-4")
    },
    "execute:hang": {
        c: (
            "timed_out",
            r"timed out after [\d.]+ s in execute of .*" + LOGGED.format(where="execute", how="hang"),
        )
        for c in ("RT-3", "RT-4")
    },
}


@pytest.fixture(scope="module")
def misbehaving_context(broken_runtime_dir, misbehaving_runner):
    import os

    from conformance.context import Context
    from conformance.descriptor import load_descriptor

    sys.path.insert(0, str(BROKEN))
    os.environ["BROKEN_RUNTIME_DIR"] = str(broken_runtime_dir)
    spec = "broken_backends.descriptors:MISBEHAVING"
    ctx = Context(
        load_descriptor(spec), spec, timeout=WARM_UP_TIMEOUT_S, target="local", runner=misbehaving_runner
    )
    yield ctx
    ctx.close()
    os.environ.pop("BROKEN_RUNTIME_DIR", None)
    sys.path.remove(str(BROKEN))


@pytest.mark.parametrize("fault", [None, *CASES])  # None first: it makes the samples' lowerings
def test_a_fault_behind_the_runner_fails_the_checks_that_met_it(misbehaving_context, fault, monkeypatch):
    if fault:
        monkeypatch.setenv("MISBEHAVE", fault)
        monkeypatch.setattr(misbehaving_context, "timeout", float(TIMEOUT_S))
    else:
        monkeypatch.delenv("MISBEHAVE", raising=False)
    started = time.monotonic()
    outcomes = run_checks(misbehaving_context, SELECTED)
    for check_id, (outcome, reason, seconds) in outcomes.items():
        expected = CASES.get(fault, {}).get(check_id)
        if expected is None:
            assert outcome == "passed", (check_id, reason)
            continue
        assert outcome == expected[0], (check_id, reason)
        assert re.search(expected[1], reason), (check_id, reason)
        if (
            outcome == "timed_out"
        ):  # the runner stops itself at the timeout; the host waits only a little longer
            assert seconds < TIMEOUT_S + 10, (check_id, seconds)
    assert time.monotonic() - started < (2 * TIMEOUT_S + 30 if fault else WARM_UP_TIMEOUT_S)
