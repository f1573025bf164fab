"""The integer arithmetic of the reference runtime's quantized ops, in Python:
the reference the C++ kernels (runtime/src/executor.cpp) are compared with
bit for bit (reference_backend/tests/test_quantized.py), and where the
serializer gets its fixed-point multipliers. docs/quantization.md has the
formulas.

Every function takes and returns torch tensors; integer work is done in
int64, where nothing the runtime computes in int64 can overflow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

QMIN, QMAX = -128, 127
#: Bounds of the shift of a fixed-point multiplier (the runtime refuses others).
MIN_SHIFT, MAX_SHIFT = 1, 62
_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1


class QuantizationError(ValueError):
    """A scale the runtime's fixed-point arithmetic cannot represent."""


def fixed_point(real: float) -> tuple[int, int]:
    """(multiplier, shift) with real ~= multiplier / 2**shift, multiplier in [2**30, 2**31)
    (or 0), shift in [1, 62]. Raises QuantizationError for real >= 2**30."""
    if not real > 0.0:
        if real == 0.0:
            return 0, MIN_SHIFT
        raise QuantizationError(f"negative or NaN scale ratio {real}")
    fraction, exponent = math.frexp(real)  # real = fraction * 2**exponent, fraction in [0.5, 1)
    multiplier = round(fraction * 2**31)
    if multiplier == 2**31:
        multiplier //= 2
        exponent += 1
    shift = 31 - exponent
    if shift < MIN_SHIFT:
        raise QuantizationError(f"scale ratio {real} is too large for a fixed-point multiplier")
    if shift > MAX_SHIFT:  # a tiny ratio: fewer significant bits
        multiplier >>= shift - MAX_SHIFT
        shift = MAX_SHIFT
    return multiplier, shift


def shared_shift(reals: Sequence[float]) -> tuple[list[int], int]:
    """Multipliers below 2**30 with one shift for several ratios (quantized add)."""
    top = max(reals)
    if not top > 0.0:
        raise QuantizationError(f"scale ratios {list(reals)} are not positive")
    shift = 30 - math.frexp(top)[1]  # top * 2**shift in [2**29, 2**30)
    if shift < MIN_SHIFT:
        raise QuantizationError(f"scale ratios {list(reals)} are too large for a fixed-point multiplier")
    shift = min(shift, MAX_SHIFT)
    return [round(r * 2**shift) for r in reals], shift


def _shift_round(v: torch.Tensor, shift: torch.Tensor | int) -> torch.Tensor:
    """Round half up: (v + 2**(shift-1)) >> shift, an arithmetic (flooring) shift."""
    if isinstance(shift, int):
        return (v + (1 << (shift - 1))) >> shift
    return (v + (torch.ones_like(shift) << (shift - 1))) >> shift


def requantize(acc: torch.Tensor, multiplier, shift) -> torch.Tensor:
    """round_half_up(clamp_int32(acc) * multiplier / 2**shift), clamped to int32 (int64 result)."""
    acc = acc.to(torch.int64).clamp(_I32_MIN, _I32_MAX)
    if not isinstance(multiplier, int):
        multiplier = torch.as_tensor(multiplier, dtype=torch.int64)
        shift = torch.as_tensor(shift, dtype=torch.int64)
    return _shift_round(acc * multiplier, shift).clamp(_I32_MIN, _I32_MAX)


def inverse_scale(scale: float) -> float:
    """The float32 factor quantize multiplies by: float32(1 / scale), as torch's quantize_per_tensor."""
    return float(torch.tensor(1.0 / scale, dtype=torch.float32))


def quantize(x: torch.Tensor, inv_scale: float, zero_point: int, qmin: int, qmax: int) -> torch.Tensor:
    """int8 of round_half_even(x * inv_scale) + zero_point, clamped (float32 product)."""
    product = x.to(torch.float32) * torch.tensor(inv_scale, dtype=torch.float32)
    r = torch.round(product).nan_to_num(0.0).clamp(-1e9, 1e9)
    return (r.to(torch.int64) + zero_point).clamp(qmin, qmax).to(torch.int8)


def dequantize(q: torch.Tensor, scale: float, zero_point: int) -> torch.Tensor:
    """float32 (q - zero_point) * float32(scale)."""
    return (q.to(torch.int32) - zero_point).to(torch.float32) * torch.tensor(scale, dtype=torch.float32)


def _finish(acc: torch.Tensor, multiplier, shift, zero_point: int, qmin: int, qmax: int) -> torch.Tensor:
    return (zero_point + requantize(acc, multiplier, shift)).clamp(qmin, qmax).to(torch.int8)


def qlinear(x, weight, bias, multipliers, shifts, x_zero, out_zero, qmin, qmax) -> torch.Tensor:
    """int8 x [..., K] by int8 weight [N, K] (symmetric), int32 bias [N], per-channel requantization."""
    acc = (x.to(torch.int64) - x_zero) @ weight.to(torch.int64).T
    if bias is not None:
        acc = acc + torch.as_tensor(bias, dtype=torch.int64)
    m = torch.as_tensor(multipliers, dtype=torch.int64)
    s = torch.as_tensor(shifts, dtype=torch.int64)
    return _finish(acc, m, s, out_zero, qmin, qmax)


def qconv2d(
    x, weight, bias, stride, padding, dilation, groups, multipliers, shifts, x_zero, out_zero, qmin, qmax
):
    """int8 NCHW convolution, padding read as x_zero, per-output-channel requantization."""
    centered = (x.to(torch.int64) - x_zero).to(torch.float64)
    # float64 holds every int8 x int8 sum of a conv below 2**53 exactly.
    acc = torch.nn.functional.conv2d(
        centered, weight.to(torch.float64), None, stride, padding, dilation, groups
    )
    acc = acc.round().to(torch.int64)
    if bias is not None:
        acc = acc + torch.as_tensor(bias, dtype=torch.int64).view(1, -1, 1, 1)
    m = torch.as_tensor(multipliers, dtype=torch.int64).view(1, -1, 1, 1)
    s = torch.as_tensor(shifts, dtype=torch.int64).view(1, -1, 1, 1)
    return _finish(acc, m, s, out_zero, qmin, qmax)


def qadd(a, b, a_zero, b_zero, out_zero, qmin, qmax, a_multiplier, b_multiplier, shift) -> torch.Tensor:
    """int8 a + b: ((a - za) * Ma + (b - zb) * Mb) / 2**shift, rounded half up, plus zo."""
    acc = (a.to(torch.int64) - a_zero) * a_multiplier + (b.to(torch.int64) - b_zero) * b_multiplier
    return (out_zero + _shift_round(acc, shift)).clamp(qmin, qmax).to(torch.int8)


def qrelu(x, x_zero, out_zero, qmin, qmax, multiplier, shift) -> torch.Tensor:
    """int8 relu with requantization from the input's to the output's parameters."""
    v = (x.to(torch.int64) - x_zero).clamp(min=0)
    return _finish(v, multiplier, shift, out_zero, qmin, qmax)


def quantize_bias(bias: torch.Tensor, x_scale: float, weight_scales: torch.Tensor) -> list[int]:
    """int32 bias in units of x_scale * weight_scale[n], rounded half to even, saturated."""
    scaled = torch.round(bias.to(torch.float64) / (x_scale * weight_scales.to(torch.float64)))
    return [int(v) for v in scaled.clamp(_I32_MIN, _I32_MAX).to(torch.int64)]
