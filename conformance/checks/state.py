"""State checks (C-STATE-1, C-STATE-2): a program that mutates a registered buffer on every call (as a
KV cache) keeps that state right when the backend runs in it.

The stateful program is made of the backend's first delegated sample model (``conformance.vendor.
state_tasks``: the sample reads buffers that each call updates in place), lowered once with the
backend's partitioners and executed step by step: two loads of it interleaved, each with its own inputs and
positions, then a third load after both are freed. Each step's output is compared with eager PyTorch
run the same way on a fresh module. A step that differs is named with the property it breaks: the
state did not carry from one execute to the next, two loaded methods share it, or a new load does not
start fresh; the output is compared with what each defect gives to say which one it looks like.
"""

from __future__ import annotations

from typing import Any

from conformance.comparison import assert_outputs_close
from conformance.context import Context
from conformance.outcomes import CheckFailed, NotApplicable
from conformance.registry import check
from conformance.vendor.records import unpack
from conformance.vendor.task_registry import STATE_FLOW

#: The program the checks run, named as the runtime's step lines name it (first and second load, then
#: the load after both are freed).
NAMES = ("kv_cache_first", "kv_cache_second", "kv_cache_again")
LABELS = ("the first loaded method", "the second loaded method", "the method loaded again")
#: The operators that write the cache (ExecuTorch turns index_copy_ into index_put).
UPDATES = ("aten::index_copy", "aten::index_put", "aten::index_put_", "aten::index_copy_")


def primary_sample(ctx: Context) -> Any:
    """The sample model the stateful program is made of: the first that must be delegated."""
    models = ctx.descriptor.sample_models
    return next((m for m in models if m.delegated), models[0])


def state_flow(ctx: Context, which: str) -> dict[str, Any]:
    """The stateful program lowered with the partitioners ``which`` names, shared by the run."""
    label = "make_partitioners()" if which == "default" else f"{which}.make_partitioners()"
    name = primary_sample(ctx).name
    return ctx.shared(
        ("state_flow", which),
        lambda: ctx.call(
            STATE_FLOW,
            which,
            name,
            what=f"lowering the stateful program of sample model {name!r} with {label}",
        ),
    )


def _matches(actual: list[Any], packed: bytes, rtol: float, atol: float) -> bool:
    try:
        assert_outputs_close("", actual, unpack(packed), rtol, atol)
    except CheckFailed:
        return False
    return True


def judge(ctx: Context, which: str) -> str:
    """Runs the stateful program lowered with ``which``'s partitioners as the module docstring says; a note
    of what ran, or CheckFailed naming the property, the method and the step."""
    ctx.require_runtime()
    flow = state_flow(ctx, which)
    backend_id = ctx.descriptor.backend_id
    program = f"the stateful program of sample model {flow['sample']!r} ({flow['form']})"
    if not flow["delegated"]:
        raise NotApplicable(
            f"the backend's partitioners delegated nothing of {program}; it ran on CPU: {', '.join(flow['cpu'])}"
        )
    claimed = [op for op in flow["delegated"] if op in UPDATES]
    if which != "default" and not claimed:
        raise CheckFailed(
            f"the descriptor declares {which}, but its partitioners left the buffer update of {program} on CPU"
            f" ({', '.join(op for op in flow['cpu'] if op in UPDATES) or 'none'}); "
            f"{backend_id} delegated only {', '.join(flow['delegated'])}"
        )
    model = ctx.descriptor.sample(flow["sample"])
    rtol, atol = model.rtol, model.atol
    steps = flow["steps"]
    pte = flow["pte"]
    first, second, again = NAMES
    rounds = [{first: flow["inputs"][0][k], second: flow["inputs"][1][k]} for k in range(steps)]
    together = ctx.execute_repeatedly([(first, pte), (second, pte)], [_unpacked(r) for r in rounds], 1)
    for k in range(steps):
        for which_seq, name in enumerate((first, second)):
            actual = together[(name, 0, k)]
            other = together.get(((second, first)[which_seq], 0, k))
            _compare(flow, which_seq, k, actual, other, rtol, atol)
    reloaded = ctx.execute_repeatedly(
        [(again, pte)], [{again: unpack(flow["inputs"][0][k])} for k in range(steps)], 1
    )
    for k in range(steps):
        actual = reloaded[(again, 0, k)]
        if _matches(actual, flow["expected"][0][k], rtol, atol):
            continue
        looks = (
            " (the output equals the state the earlier loads left, continued: a new load does not start fresh)"
            if _matches(actual, flow["continued"][k], rtol, atol)
            else ""
        )
        raise CheckFailed(
            f"state did not start fresh: step {k + 1} of {steps} of {LABELS[2]} (after the first two were "
            f"freed) differs: {_detail(actual, flow['expected'][0][k], rtol, atol)}{looks}"
        )
    where = (
        f"the buffer update ({', '.join(claimed)}) ran in the {backend_id} delegate"
        if claimed
        else f"the buffer update ran on CPU ({', '.join(op for op in flow['cpu'] if op in UPDATES) or 'none'})"
    )
    return (
        f"{steps} steps of two interleaved loads of {program} and {steps} of a third load "
        f"matched eager PyTorch run the same way; {backend_id} delegated {', '.join(flow['delegated'])}; {where}"
    )


def _unpacked(inputs: dict[str, bytes]) -> dict[str, list[Any]]:
    return {name: unpack(packed) for name, packed in inputs.items()}


def _detail(actual: list[Any], packed: bytes, rtol: float, atol: float) -> str:
    try:
        assert_outputs_close("its", actual, unpack(packed), rtol, atol)
    except CheckFailed as exc:
        return str(exc)
    return "it matches"  # not reached: called for an output that differs


def _compare(
    flow: dict[str, Any],
    seq: int,
    k: int,
    actual: list[Any],
    other: list[Any] | None,
    rtol: float,
    atol: float,
) -> None:
    """CheckFailed unless step ``k`` of sequence ``seq`` (0: the first load, 1: the second) is right."""
    expected = flow["expected"][seq][k]
    if _matches(actual, expected, rtol, atol):
        return
    steps = flow["steps"]
    at = f"step {k + 1} of {steps} of {LABELS[seq]} (the two executed in turn, each with its own inputs)"
    detail = _detail(actual, expected, rtol, atol)
    if k > 0 and _matches(actual, flow["dropped"][seq][k], rtol, atol):
        raise CheckFailed(
            f"state did not carry: {at} differs: {detail} (the output at step {k + 1} equals a fresh "
            "program's: the updates of the earlier steps were lost)"
        )
    if _matches(actual, flow["shared"][seq][k], rtol, atol):
        raise CheckFailed(
            f"state is shared between two loaded methods: {at} differs: {detail} (the output equals one "
            "program's fed the inputs of both methods in turn)"
        )
    if seq == 1 and other is not None and _matches(actual, _pack(other), rtol, atol):
        raise CheckFailed(
            f"state is shared between two loaded methods: {at} differs: {detail} (the output equals the "
            f"first loaded method's at step {k + 1})"
        )
    if k == 0:
        raise CheckFailed(f"the first step already differs, before any state: {at}: {detail}")
    raise CheckFailed(
        f"state did not carry: {at} differs: {detail} (the {k} step(s) before it matched: what they wrote into "
        "the program's buffers is not what this step read)"
    )


def _pack(outputs: list[Any]) -> bytes:
    from conformance.vendor.records import pack

    return pack(outputs)


@check(
    "STATE-1",
    "C-STATE-1",
    "a mutated buffer carries across executes, apart per loaded method, fresh in a new load",
)
def state_across_calls(ctx: Context) -> str:
    return judge(ctx, "default")


@check(
    "STATE-2",
    "C-STATE-2",
    "with partitioners that claim the mutated buffer, the state is kept as STATE-1 requires",
    applies_if="mutable_state",
)
def claimed_state_across_calls(ctx: Context) -> str:
    ctx.capability("mutable_state")
    return judge(ctx, "mutable_state")
