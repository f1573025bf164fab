"""How the runner finds the cases a failing lowering fails on: the cases no partitioner claimed are lowered
together once, only the claimed ones are bisected; every failure still names one case. The lowerings are
simulated (the real ones are in test_operator_defects.py and tests/conformance/test_operator_crashes.py)."""

from __future__ import annotations

import pytest
import torch

from conformance.operators import runner, tasks
from conformance.operators.isolation import Isolation
from conformance.outcomes import CheckFailed, VendorCrashed


def _keys(n: int) -> tuple[str, ...]:
    return tuple(f"aten::op{i % 7}|float32|case{i}" for i in range(n))


def _lower(monkeypatch, keys: tuple[str, ...], bad: set[str], claimed: set[str]) -> tuple[dict, list[int]]:
    """Runs _lower_all on ``keys`` with a backend whose lowering fails when a part holds a ``bad`` case and
    that claims the ``claimed`` cases (as the task answers); (what was found, the size of each lowering)."""
    sizes: list[int] = []

    def lowering(ctx, part, vendor=None):
        sizes.append(len(part))
        if not bad & set(part):
            return {"cases": [{"key": k, "cpu_ops": [], "backends": ["B"]} for k in part]}
        if len(part) == 1:
            raise CheckFailed(f"lowering of {part[0]} raised ValueError: bad")
        return {"failed": "lowering raised ValueError: bad", "claimed": [k for k in part if k in claimed]}

    monkeypatch.setattr(runner, "_lowering", lowering)
    found: dict = {}
    runner._lower_all(None, keys, found, Isolation("lowering"))  # type: ignore[arg-type]
    return found, sizes


def test_a_failing_batch_bisects_only_the_cases_a_partitioner_claimed(monkeypatch):
    keys = _keys(80)
    bad = {keys[40], keys[77]}
    found, sizes = _lower(monkeypatch, keys, bad, claimed=bad | {keys[3], keys[50]})
    assert sorted(k for k, r in found.items() if "error" in r) == sorted(bad)
    assert all("cpu_ops" in found[k] for k in keys if k not in bad)
    # the batch, the 76 unclaimed cases together, the 4 claimed ones alone (halving took 15 lowerings)
    assert sizes == [80, 76, 1, 1, 1, 1]


def test_without_a_useful_claim_a_failing_batch_is_halved(monkeypatch):
    keys = _keys(24)
    bad = {keys[5]}
    for claimed in (set(), set(keys)):
        found, sizes = _lower(monkeypatch, keys, bad, claimed)
        assert [k for k, r in found.items() if "error" in r] == [keys[5]]
        assert len(found) == len(keys)
        assert sizes[:3] == [24, 12, 6]


def test_a_failure_outside_the_claimed_cases_is_still_named(monkeypatch):
    keys = _keys(30)
    found, sizes = _lower(monkeypatch, keys, bad={keys[9]}, claimed={keys[1], keys[2]})
    assert [k for k, r in found.items() if "error" in r] == [keys[9]]
    assert len(found) == len(keys)
    assert sizes[:2] == [30, 28]  # the unclaimed part failed in turn: it is halved


@pytest.mark.parametrize("tagged", [(), (1,), (0, 2)])
def test_the_task_names_the_cases_whose_nodes_a_partitioner_tagged(tagged):
    class Three(torch.nn.Module):
        def forward(self, a, b, c):
            return a + 1, b * 2, (c - 1, c)

    graph_module = torch.fx.symbolic_trace(Three())
    output = next(n for n in graph_module.graph.nodes if n.op == "output")
    outputs = [output.args[0][0], output.args[0][1], *output.args[0][2]]
    for at in tagged:
        outputs[at].meta["delegation_tag"] = "tag0"
    flat = graph_module.graph
    output.args = (tuple(outputs),)
    program = type("Program", (), {"graph": flat})()
    assert tasks._claimed(program, [(0, 1), (1, 2), (2, 4)]) == set(tagged)


def _lower_crashing(monkeypatch, keys: tuple[str, ...], crashing: set[str]) -> dict:
    """Runs the lowering phase on ``keys`` with a backend whose lowering crashes the vendor process when a part
    holds a ``crashing`` case (as Vela 5.1 does on a zero-element tensor); what was found."""

    def lowering(ctx, part, vendor=None):
        if crashing & set(part):
            raise VendorCrashed("crashed with SIGSEGV in lowering")
        return {"cases": [{"key": k, "cpu_ops": [], "backends": ["B"]} for k in part]}

    monkeypatch.setattr(runner, "_lowering", lowering)
    monkeypatch.setattr(runner, "_prefetch", lambda ctx, batches: None)
    return runner._lower_phase(None, [keys])  # type: ignore[arg-type]


def test_discovery_lowers_every_case_of_an_operator_whatever_crashes_beside_it(monkeypatch):
    """A case that crashes the lowering says nothing of its operator's other cases: discovery
    (LOWERING_CRASH_STOPS_OPERATOR False) lowers each of them, a run stops the operator (bounded time)."""
    keys = tuple(f"aten::add.Tensor|float32|{n}" for n in ("rank0", "size1", "size0", "rank3_size0", "rank2"))
    keys += tuple(f"aten::add.Tensor|float32|case{i}" for i in range(14))
    crashing = {keys[2], keys[3], keys[12]}
    monkeypatch.setattr(runner, "LOWERING_CRASH_STOPS_OPERATOR", False)
    found = _lower_crashing(monkeypatch, keys, crashing)
    assert sorted(k for k, r in found.items() if r.get("crash")) == sorted(crashing)
    assert all(found[k].get("backends") == ["B"] for k in keys if k not in crashing), found
    monkeypatch.setattr(runner, "LOWERING_CRASH_STOPS_OPERATOR", True)
    found = _lower_crashing(monkeypatch, keys, crashing)
    assert [k for k, r in found.items() if r.get("crash")] == [keys[2]]
    assert sum("not_run" in r for r in found.values()) > 10
