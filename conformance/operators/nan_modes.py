"""Declared NaN semantics of the operators that select among their operands (TOSA 1.0's ``nan_mode``).

Eager PyTorch propagates NaN: ``maximum(nan, 0)`` is NaN, and so is a max-pooling window holding one. TOSA
1.0, the operator set Arm's and other NPUs' compilers target, makes it an attribute of MAXIMUM, MINIMUM,
REDUCE_MAX, REDUCE_MIN, MAX_POOL2D and ARGMAX: ``PROPAGATE`` (eager's) or ``IGNORE`` (IEEE 754's maxNum and
minNum: a NaN operand is left out, and the result is NaN only when every operand is NaN). A backend
declares ``nan_mode="ignore"`` per operator (``OperatorDeclaration``); OPS-2 then judges that operator's
cases against the ignoring result, which ``ignoring_nan`` computes in the vendor process next to eager's.

For an operator of ``SELECTING``, the ignoring result is the operator run on its inputs with each NaN
replaced by the identity of its selection (-inf for the max family, +inf for the min family), made NaN
again where every operand was NaN: where the operator run on inputs holding the identity at the NaNs and
0 elsewhere still gives the identity. A genuine -inf among the operands stays -inf.
"""

from __future__ import annotations

import math
from typing import Any

PROPAGATE, IGNORE = "propagate", "ignore"
NAN_MODES = (PROPAGATE, IGNORE)

#: operator -> the identity of what it selects (the max family: -inf; the min family: +inf).
SELECTING: dict[str, float] = {
    "aten::maximum": -math.inf,
    "aten::amax": -math.inf,
    "aten::max_pool1d": -math.inf,
    "aten::max_pool2d_with_indices": -math.inf,
    "aten::max_pool3d_with_indices": -math.inf,
    "aten::minimum": math.inf,
    "aten::amin": math.inf,
}


def nan_mode_problem(op: str, mode: object) -> str | None:
    """Why ``mode`` cannot be declared for ``op`` (a normalized schema name), or None."""
    if mode not in NAN_MODES:
        return f"nan_mode of {op} is {mode!r}, not one of {', '.join(repr(m) for m in NAN_MODES)}"
    if mode == IGNORE and op not in SELECTING:
        return (
            f"nan_mode='ignore' is declared for {op}, which does not select among its operands; it is defined for "
            f"{', '.join(sorted(SELECTING))} (TOSA 1.0's nan_mode), and any other operator must propagate NaN as "
            "eager PyTorch does"
        )
    return None


def ignoring_nan(op: str, module: Any, inputs: list[Any]) -> list[Any] | None:
    """The outputs of ``module`` (the case of ``op``) under nan_mode IGNORE, or None when ``op`` selects
    nothing or no floating-point input holds a NaN (then IGNORE and PROPAGATE agree)."""
    import torch

    identity = SELECTING.get(op)
    floats = [x.is_floating_point() for x in inputs]
    if identity is None or not any(f and bool(torch.isnan(x).any()) for f, x in zip(floats, inputs)):
        return None

    def run(values: list[Any]) -> list[Any]:
        with torch.no_grad():
            out = module(*values)
        return list(out) if isinstance(out, (tuple, list)) else [out]

    left_out = [
        torch.where(torch.isnan(x), torch.full_like(x, identity), x) if f else x
        for f, x in zip(floats, inputs)
    ]
    marked = [
        torch.where(torch.isnan(x), torch.full_like(x, identity), torch.zeros_like(x)) if f else x
        for f, x in zip(floats, inputs)
    ]
    return [
        torch.where(every_nan == identity, torch.full_like(value, math.nan), value)
        if value.is_floating_point() and every_nan.is_floating_point()
        else value
        for value, every_nan in zip(run(left_out), run(marked))
    ]
