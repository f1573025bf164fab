"""isolation.Isolation's bounds, on its own: how many parts crash (each a vendor-process start) before every
crashing case is named, for a backend that crashes on everything, on one case of each operator, or on
several; the real crashes are in tests/conformance/test_operator_crashes.py."""

from __future__ import annotations

import math

from conformance.operators.isolation import CONSECUTIVE, Isolation


def _keys(ops: int, cases: int) -> tuple[str, ...]:
    return tuple(f"aten::op{o}|float32|case{c}" for o in range(ops) for c in range(cases))


def _judge(batches: list[tuple[str, ...]], crashes_on) -> tuple[Isolation, dict[str, str]]:
    """Runs ``batches`` as the runner does: a part crashes when it holds a key ``crashes_on`` accepts."""
    isolation = Isolation("execution")
    found: dict[str, str] = {}

    def run(part: tuple[str, ...]) -> None:
        for key in part:
            why = isolation.not_run_reason(key)
            if why is not None:
                found[key] = why
        part = tuple(k for k in part if k not in found)
        if not part:
            return
        if any(crashes_on(k) for k in part):
            isolation.crashed(part, f"crashed with SIGSEGV in execute of {part[0]}")
            if len(part) == 1:
                found[part[0]] = "crashed"
            else:
                isolation.isolate(part, run)
            return
        isolation.passed()
        found.update(dict.fromkeys(part, "passed"))

    for batch in batches:
        run(batch)
    return isolation, found


def test_a_backend_that_crashes_on_everything_costs_consecutive_crashes():
    keys = _keys(ops=40, cases=20)
    isolation, found = _judge([keys[i : i + 96] for i in range(0, len(keys), 96)], lambda k: True)
    assert isolation.crashes == 1 + CONSECUTIVE  # the first batch, then the first case of operators 0, 1, 2
    assert list(found.values()).count("crashed") == CONSECUTIVE
    assert len(found) == len(keys) and isolation.halted is not None
    assert all(v == "crashed" or v.startswith("not run: ") for v in found.values())


def test_one_crashing_case_per_operator_is_named_for_every_operator_in_log_crashes():
    keys = _keys(ops=10, cases=23)
    isolation, found = _judge(
        [keys[i : i + 96] for i in range(0, len(keys), 96)], lambda k: k.endswith("case7")
    )
    assert sorted(k for k, v in found.items() if v == "crashed") == [
        f"aten::op{o}|float32|case7" for o in range(10)
    ]
    assert isolation.halted is None
    # Per operator: its part, then about log2(cases) halves on the way down; plus one crash per batch.
    assert isolation.crashes <= 10 * (1 + math.ceil(math.log2(23))) + 3, isolation.crashes
    # The cases judged before their operator's crash passed; the others are not run, naming it.
    assert all(
        v == "passed" or "case 'case7' of this operator crashed" in v
        for v in found.values()
        if v != "crashed"
    )


def test_a_crash_on_the_first_case_of_an_operator_does_not_stop_the_others():
    keys = _keys(ops=3, cases=10)
    isolation, found = _judge([keys], lambda k: k == "aten::op1|float32|case0")
    assert found["aten::op1|float32|case0"] == "crashed"
    assert all(found[k] == "passed" for k in keys if not k.startswith("aten::op1|"))
    assert isolation.crashes == 2 and isolation.halted is None  # the batch, then op1's first case alone


def test_without_stop_operator_each_crashing_case_is_named_and_the_others_run():
    """Discovery (stop_operator False): every crashing case named, every other case run, in bounded crashes."""
    keys = _keys(ops=4, cases=19)
    crashing = {k for k in keys if k.endswith(("case2", "case3", "case12"))}
    isolation = Isolation("lowering", stop_operator=False)
    found: dict[str, str] = {}

    def run(part: tuple[str, ...]) -> None:
        part = tuple(k for k in part if k not in found)
        if any(k in crashing for k in part):
            isolation.crashed(part, "crashed with SIGSEGV")
            if len(part) == 1:
                found[part[0]] = "crashed"
            else:
                isolation.isolate(part, run)
            return
        isolation.passed()
        found.update(dict.fromkeys(part, "passed"))

    run(keys)
    assert sorted(k for k, v in found.items() if v == "crashed") == sorted(crashing)
    assert all(v == "passed" for k, v in found.items() if k not in crashing) and len(found) == len(keys)
    assert isolation.halted is None and isolation.crashes <= 4 * 3 * (1 + math.ceil(math.log2(19))) + 1


def test_a_timeout_stops_its_operator_even_without_stop_operator():
    isolation = Isolation("lowering", stop_operator=False)
    isolation.crashed(("aten::op0|float32|case0",), "crashed with SIGSEGV")
    assert isolation.not_run_reason("aten::op0|float32|case1") is None
    isolation.crashed(("aten::op0|float32|case2",), "timed out after 60 s", timed_out=True)
    assert "timed out" in (isolation.not_run_reason("aten::op0|float32|case1") or "")
