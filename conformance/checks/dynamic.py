"""Dynamic-shape checks (C-DYN-1..2): a sample exported with dimensions bounded
above (torch.export.Dim(..., max=...)) runs at several sizes, and a size
above a bound is refused or computed right. They apply to backends whose descriptor declares
``dynamic_shapes`` (``conformance.descriptor.DynamicShapesSupport``).
"""

from __future__ import annotations

import re

from conformance.comparison import assert_outputs_close
from conformance.context import Context
from conformance.outcomes import CheckFailed
from conformance.registry import check
from conformance.vendor.records import unpack
from conformance.vendor.task_registry import DYNAMIC_FLOW

CAPABILITY = "dynamic_shapes"
#: what the shared task does, for messages ({sample}: the sample's name)
WHAT = "export with dynamic shapes and lowering of sample model {sample}"


@check(
    "DYN-1",
    "C-DYN-1",
    "a program with bounded dynamic dimensions runs at sizes 1, between and at the bounds",
    applies_if="dynamic_shapes",
)
def runs_within_bounds(ctx: Context) -> str:
    flow = ctx.capability_flow(CAPABILITY, DYNAMIC_FLOW, WHAT)
    name = ctx.capability(CAPABILITY).sample
    model = ctx.descriptor.sample(name)
    ran = []
    for case in flow["cases"]:
        if not case["within"]:
            continue
        label = f"sample {name!r} with {case['label']} (input shapes {case['shapes']})"
        actual = ctx.execute(flow["pte"], unpack(case["inputs"]), label)
        assert_outputs_close(label, actual, unpack(case["expected"]), model.rtol, model.atol)
        ran.append(str(case["shapes"]))
    return f"bounds {flow['bounds']}; ran input shapes {', '.join(ran)}"


@check(
    "DYN-2",
    "C-DYN-2",
    "a size above a bound is refused with an error or computed right, never a crash or a wrong output",
    applies_if="dynamic_shapes",
)
def refuses_above_bound(ctx: Context) -> str:
    flow = ctx.capability_flow(CAPABILITY, DYNAMIC_FLOW, WHAT)
    name = ctx.capability(CAPABILITY).sample
    model = ctx.descriptor.sample(name)
    notes = []
    for case in flow["cases"]:
        if case["within"]:
            continue
        label = f"sample {name!r} with {case['label']} (input shapes {case['shapes']})"
        error, _outputs, log = ctx.try_load(flow["pte"], label, inputs=unpack(case["inputs"]))
        if error is None:
            # Computed instead of refused: sound only if the backend resized what it computes with (XNNPACK
            # reshapes its runtime), which right outputs show; wrong ones are what an overflow looks like.
            actual = ctx.execute(flow["pte"], unpack(case["inputs"]), label)
            try:
                assert_outputs_close(label, actual, unpack(case["expected"]), model.rtol, model.atol)
            except CheckFailed as exc:
                raise CheckFailed(
                    f"the runtime accepted a size above the bound (bounds {flow['bounds']}) and returned wrong "
                    f"outputs; it must refuse it with an error or compute it right: {exc}"
                ) from None
            notes.append(f"{case['label']}: computed, and right (the backend resizes instead of refusing)")
            continue
        lines = [line.strip() for line in log.splitlines() if line.strip() and "step]" not in line]
        own = [line for line in lines if f"{ctx.descriptor.backend_id}:" in line]
        where = (
            f"the backend logged: {own[-1]}"
            if own
            else f"last log line: {lines[-1]}"
            if lines
            else "no log line"
        )
        notes.append(f"{case['label']}: refused, {_returned(error)} ({where[:200]})")
    # A pass says so first: the error codes it quotes are the refusals C-DYN-2 asks for, not failures.
    return "as required, every size above a bound was refused with an error or computed right: " + "; ".join(
        notes
    )


#: ExecuTorch's "method->execute() failed with error 0x12" (the call and the code it returned).
_FAILED_WITH = re.compile(r"([\w:.>-]+\(\))(?: for method '[^']*')? failed with error (0x[0-9a-fA-F]+)")


def _returned(error: str) -> str:
    """'method->execute() returned error 0x12' for ExecuTorch's 'method->execute() failed with error
    0x12': the refusal DYN-2 wants, worded as an answer rather than as a failure."""
    found = _FAILED_WITH.search(error)
    return f"{found.group(1)} returned error {found.group(2)}" if found else f"with {error}"
