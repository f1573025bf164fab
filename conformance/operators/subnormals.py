"""Declared subnormal semantics of an operator: kept (IEEE 754, eager PyTorch's) or flushed to zero.

Eager PyTorch on a CPU computes with subnormal (denormal) values: ``sqrt(1e-40)`` is 1e-20, ``1e-40 * 2**60``
is 1.2e-22. Many accelerators, and CPU kernels run with FTZ/DAZ set, treat a subnormal operand as zero and
flush a subnormal result to zero; TOSA 1.0 lets an implementation do so for its floating-point profiles.
Flushed *results* pass every case already (the corpus's absolute tolerance includes the dtype's smallest
normal value). Flushed *operands* change results far beyond it (``sqrt`` gives 0, ``log`` gives -inf,
``ceil`` of a positive subnormal gives 0), and the corpus's ``subnormal`` cases hold them.

A backend that flushes declares ``subnormals="flushed"`` per operator (``OperatorDeclaration``); OPS-2 then
accepts, for that operator's cases, either eager's result or the result with every subnormal operand and
result flushed to a zero of its sign, which ``flushing_subnormals`` computes in the vendor process next to
eager's. An undeclared flush still fails.
"""

from __future__ import annotations

from typing import Any

KEPT, FLUSHED = "kept", "flushed"
SUBNORMAL_MODES = (KEPT, FLUSHED)


def subnormal_mode_problem(mode: object) -> str | None:
    """Why ``mode`` cannot be declared, or None."""
    if mode not in SUBNORMAL_MODES:
        return f"subnormals is {mode!r}, not one of {', '.join(repr(m) for m in SUBNORMAL_MODES)}"
    return None


def flush(t: Any) -> Any:
    """``t`` with each subnormal value replaced by a zero of its sign (a non-float tensor as it is)."""
    import torch

    if not isinstance(t, torch.Tensor) or not t.is_floating_point():
        return t
    tiny = torch.finfo(t.dtype).tiny
    return torch.where((t != 0) & (t.abs() < tiny), torch.copysign(torch.zeros_like(t), t), t)


def has_subnormal(t: Any) -> bool:
    import torch

    return (
        isinstance(t, torch.Tensor)
        and t.is_floating_point()
        and bool(((t != 0) & (t.abs() < torch.finfo(t.dtype).tiny)).any())
    )


def flushing_subnormals(module: Any, inputs: list[Any]) -> list[Any] | None:
    """The outputs of ``module`` with its subnormal operands and results flushed to zero, or None when no
    input holds a subnormal (then both semantics agree up to the tolerance every case has)."""
    import torch

    if not any(has_subnormal(x) for x in inputs):
        return None
    with torch.no_grad():
        out = module(*[flush(x) for x in inputs])
    return [flush(o) for o in (out if isinstance(out, (tuple, list)) else [out])]
