"""The one comparison every check uses: outputs of the runtime against eager
PyTorch, with the declared tolerances, and a message that names the sample,
the output, the shapes or the worst difference."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conformance.outcomes import CheckFailed, ensure


def assert_outputs_close(
    label: str,
    actual: Sequence[Any],
    expected: Sequence[Any],
    rtol: float,
    atol: float,
    reference: str = "eager PyTorch",
    start: int = 0,
) -> None:
    """Raises CheckFailed unless every output of ``actual`` matches ``expected`` (count, shape, dtype,
    values within ``rtol``/``atol``; NaN matches NaN). ``reference`` names what ``expected`` came from;
    outputs are numbered from ``start``."""
    import torch

    short = "eager" if reference == "eager PyTorch" else reference.removeprefix("the ")
    ensure(len(actual) == len(expected), f"{label}: {len(actual)} outputs, {reference} gives {len(expected)}")
    for i, (a, e) in enumerate(zip(actual, expected), start):
        ensure(
            isinstance(a, torch.Tensor),
            f"{label} output {i}: the runtime returned {type(a).__name__}, not a tensor",
        )
        ensure(
            tuple(a.shape) == tuple(e.shape),
            f"{label} output {i}: shape {tuple(a.shape)}, {short} {tuple(e.shape)}",
        )
        ensure(a.dtype == e.dtype, f"{label} output {i}: dtype {a.dtype}, {short} {e.dtype}")
        if torch.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True):
            continue
        a64, e64 = a.double(), e.double()
        nan = torch.isnan(a64) != torch.isnan(e64)
        if bool(nan.any()):
            where = tuple(int(k) for k in torch.nonzero(nan)[0])
            raise CheckFailed(
                f"{label} output {i} differs from {reference}: NaN at index {where} in "
                f"{'the runtime' if bool(torch.isnan(a64)[where]) else reference} only"
            )
        diff = (a64 - e64).abs().nan_to_num(nan=0.0, posinf=float("inf"))
        worst = tuple(int(k) for k in torch.nonzero(diff == diff.max())[0])
        # The element that exceeds its bound (atol + rtol * |expected|) most: the largest difference may be
        # within a large element's bound while a small element is out of its own.
        bound = atol + rtol * e64.abs().nan_to_num(nan=0.0, posinf=float("inf"))
        excess = torch.where(diff > bound, diff / bound.clamp_min(float.fromhex("0x1p-1074")), 0.0)
        outside = tuple(int(k) for k in torch.nonzero(excess == excess.max())[0])
        also = (
            ""
            if outside == worst or not bool(excess.any())
            else f"; the bound is exceeded most at index {outside} (runtime {float(a64[outside]):.6g}, {short} "
            f"{float(e64[outside]):.6g}: difference {float(diff[outside]):.3g}, bound {float(bound[outside]):.3g})"
        )
        raise CheckFailed(
            f"{label} output {i} differs from {reference}: max abs difference {float(diff.max()):.3g} at index "
            f"{worst} (runtime {float(a64[worst]):.6g}, {short} {float(e64[worst]):.6g}) exceeds the declared "
            f"tolerance (rtol={rtol}, atol={atol}){also}"
        )
