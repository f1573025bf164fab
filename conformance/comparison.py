"""The one comparison every check uses: outputs of the runtime against eager
PyTorch, with the declared tolerances, and a message that names the sample,
the output, the shapes or the worst difference (``assert_outputs_close``); and
the figures the reports show beside a verdict, the largest difference and how
much of its bound it used (``closeness``)."""

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
        close = torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)  # in the outputs' dtype: exact
        if bool(close.all()):
            continue
        # Complex outputs stay complex (a cast to float64 would drop the imaginary part); the values and
        # differences in the message are read from the outputs themselves, so integers beyond 2**53 stay exact.
        a64, e64 = _wide(a), _wide(e)
        nan = torch.isnan(a64) != torch.isnan(e64)
        if bool(nan.any()):
            where = tuple(int(k) for k in torch.nonzero(nan)[0])
            raise CheckFailed(
                f"{label} output {i} differs from {reference}: NaN at index {where} in "
                f"{'the runtime' if bool(torch.isnan(a64)[where]) else reference} only"
            )
        diff = (a64 - e64).abs().nan_to_num(nan=0.0, posinf=float("inf"))
        # The element that exceeds its bound (atol + rtol * |expected|) most: the largest difference may be
        # within a large element's bound while a small element is out of its own.
        bound = atol + rtol * e64.abs().nan_to_num(nan=0.0, posinf=float("inf"))
        ratio = (diff / bound.clamp_min(float.fromhex("0x1p-1074"))).nan_to_num(nan=float("inf"))  # inf / inf
        excess = torch.where(close, -1.0, ratio)
        outside = _first_max(excess)
        worst = outside if bool(diff[outside] == diff.max()) else _first_max(diff)
        also = (
            ""
            if outside == worst
            else f"; the bound is exceeded most at index {outside} (runtime {_value(a, outside)}, {short} "
            f"{_value(e, outside)}: difference {_difference(a, e, outside)}, bound {float(bound[outside]):.3g})"
        )
        raise CheckFailed(
            f"{label} output {i} differs from {reference}: max abs difference {_difference(a, e, worst)} at index "
            f"{worst} (runtime {_value(a, worst)}, {short} {_value(e, worst)}) exceeds the declared "
            f"tolerance (rtol={rtol}, atol={atol}){also}"
        )


def closeness(
    actual: Sequence[Any], expected: Sequence[Any], rtol: float, atol: float
) -> tuple[float, float]:
    """(the largest absolute difference, the largest difference / bound) over the outputs of ``actual`` whose
    shape matches ``expected``'s, the bound being ``atol + rtol * |expected|`` as in ``assert_outputs_close``:
    equal elements (NaN with NaN included) differ by 0, a NaN against a number by infinity; 1 is at the bound.
    Figures only: whether the outputs match is ``assert_outputs_close``'s to say."""
    import torch

    worst, used = 0.0, 0.0
    for a, e in zip(actual, expected):
        if not isinstance(a, torch.Tensor) or a.shape != e.shape or a.numel() == 0:
            continue
        a64, e64 = a.double(), e.double()
        same = (a64 == e64) | (torch.isnan(a64) & torch.isnan(e64))
        diff = torch.where(same, torch.zeros_like(a64), (a64 - e64).abs()).nan_to_num(nan=float("inf"))
        bound = atol + rtol * e64.abs().nan_to_num(nan=0.0, posinf=0.0)
        ratio = torch.where(diff == 0, torch.zeros_like(diff), diff / bound)
        worst, used = max(worst, float(diff.max())), max(used, float(ratio.max()))
    return worst, used


def _wide(t: Any) -> Any:
    """``t`` as complex128 when complex, else as float64."""
    import torch

    return t.to(torch.complex128) if t.is_complex() else t.double()


def _first_max(t: Any) -> tuple[int, ...]:
    return tuple(int(k) for k in (t == t.max()).nonzero()[0])


def _value(t: Any, at: tuple[int, ...]) -> str:
    x = t[at].item()
    return str(x) if isinstance(x, int) else f"{x:.6g}"


def _difference(a: Any, e: Any, at: tuple[int, ...]) -> str:
    x, y = a[at].item(), e[at].item()
    d = abs(int(x) - int(y)) if isinstance(x, int) and isinstance(y, int) else abs(x - y)
    return str(d) if isinstance(d, int) else f"{d:.3g}"
