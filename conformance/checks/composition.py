"""Composition checks (C-CMP-1..2): the backend's partitioners followed by
ExecuTorch's XnnpackPartitioner give a program with both delegates that loads
and matches eager PyTorch. They apply to backends whose descriptor declares
``composition`` (``conformance.descriptor.CompositionSupport``).
"""

from __future__ import annotations

from conformance.comparison import assert_outputs_close
from conformance.context import Context
from conformance.outcomes import CheckFailed, ensure
from conformance.registry import check
from conformance.vendor.task_registry import COMPOSITION_FLOW

CAPABILITY = "composition"
#: what the shared task does, for messages ({sample}: the sample's name)
WHAT = "lowering sample model {sample} with XnnpackPartitioner() last"
XNNPACK_ID = "XnnpackBackend"


@check(
    "CMP-1",
    "C-CMP-1",
    "lowered with XnnpackPartitioner() after the backend's, the program has both delegates",
    applies_if="composition",
)
def both_delegates(ctx: Context) -> str:
    flow = ctx.capability_flow(CAPABILITY, COMPOSITION_FLOW, WHAT)
    name = ctx.capability(CAPABILITY).sample
    ids = [d.backend_id for d in ctx.read(flow["pte"]).delegates()]
    backend_id = ctx.descriptor.backend_id
    ensure(
        backend_id in ids,
        f"sample {name!r} lowered with XNNPACK last has no {backend_id} delegate (delegates: {ids})",
    )
    if XNNPACK_ID not in ids:
        mine = sorted({op for b, op in flow["claimed"] if b == backend_id})
        foreign = [op for op in mine if op not in ctx.descriptor.operators]
        detail = (
            f"; it claimed {', '.join(foreign)}, not in its declared operators"
            if foreign
            else f"; it claimed {', '.join(mine)}"
        )
        raise CheckFailed(
            f"sample {name!r} lowered with [{backend_id}'s partitioners, XnnpackPartitioner()] has no {XNNPACK_ID} "
            f"delegate: the backend's partitioner left XNNPACK nothing{detail}"
        )
    return f"delegates in order: {ids}"


@check(
    "CMP-2",
    "C-CMP-2",
    "the program with both delegates loads and matches eager PyTorch",
    applies_if="composition",
)
def composed_numerics(ctx: Context) -> None:
    flow = ctx.capability_flow(CAPABILITY, COMPOSITION_FLOW, WHAT)
    name = ctx.capability(CAPABILITY).sample
    model = ctx.descriptor.sample(name)
    sample = ctx.sample(name)
    actual = ctx.execute(flow["pte"], sample.inputs, f"sample {name!r} with XNNPACK")
    assert_outputs_close(f"sample {name!r} with XNNPACK", actual, sample.expected, model.rtol, model.atol)
