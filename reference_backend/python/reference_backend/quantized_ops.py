"""The reference backend's quantized operators, as PyTorch custom ops in the
namespace ``reference_backend``: what the graph pass
(``reference_backend.passes``) folds quantize/dequantize patterns into inside
a delegated subgraph, and what the serializer writes as opcodes 7 to 12.

Their eager implementations are ``reference_backend.qmath``, the same integer
arithmetic as the C++ kernels, so running a folded graph in Python is the
bit-exact reference of the runtime. Registered with ``torch.library.custom_op``
(public PyTorch API) when this module is imported.
"""

from __future__ import annotations

import torch

from reference_backend import qmath

NAMESPACE = "reference_backend"


@torch.library.custom_op(f"{NAMESPACE}::quantize", mutates_args=())
def quantize(x: torch.Tensor, inv_scale: float, zero_point: int, qmin: int, qmax: int) -> torch.Tensor:
    return qmath.quantize(x, inv_scale, zero_point, qmin, qmax)


@torch.library.custom_op(f"{NAMESPACE}::dequantize", mutates_args=())
def dequantize(q: torch.Tensor, scale: float, zero_point: int) -> torch.Tensor:
    return qmath.dequantize(q, scale, zero_point)


@torch.library.custom_op(f"{NAMESPACE}::qlinear", mutates_args=())
def qlinear(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: list[int] | None,
    multipliers: list[int],
    shifts: list[int],
    x_zero: int,
    out_zero: int,
    qmin: int,
    qmax: int,
) -> torch.Tensor:
    return qmath.qlinear(x, weight, bias, multipliers, shifts, x_zero, out_zero, qmin, qmax)


@torch.library.custom_op(f"{NAMESPACE}::qconv2d", mutates_args=())
def qconv2d(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: list[int] | None,
    stride: list[int],
    padding: list[int],
    dilation: list[int],
    groups: int,
    multipliers: list[int],
    shifts: list[int],
    x_zero: int,
    out_zero: int,
    qmin: int,
    qmax: int,
) -> torch.Tensor:
    return qmath.qconv2d(
        x, weight, bias, stride, padding, dilation, groups, multipliers, shifts, x_zero, out_zero, qmin, qmax
    )


@torch.library.custom_op(f"{NAMESPACE}::qadd", mutates_args=())
def qadd(
    a: torch.Tensor,
    b: torch.Tensor,
    a_zero: int,
    b_zero: int,
    out_zero: int,
    qmin: int,
    qmax: int,
    a_multiplier: int,
    b_multiplier: int,
    shift: int,
) -> torch.Tensor:
    return qmath.qadd(a, b, a_zero, b_zero, out_zero, qmin, qmax, a_multiplier, b_multiplier, shift)


@torch.library.custom_op(f"{NAMESPACE}::qrelu", mutates_args=())
def qrelu(
    x: torch.Tensor, x_zero: int, out_zero: int, qmin: int, qmax: int, multiplier: int, shift: int
) -> torch.Tensor:
    return qmath.qrelu(x, x_zero, out_zero, qmin, qmax, multiplier, shift)


@quantize.register_fake
def _(x, inv_scale, zero_point, qmin, qmax):
    return torch.empty_like(x, dtype=torch.int8)


@dequantize.register_fake
def _(q, scale, zero_point):
    return torch.empty_like(q, dtype=torch.float32)


@qlinear.register_fake
def _(x, weight, bias, multipliers, shifts, x_zero, out_zero, qmin, qmax):
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


@qadd.register_fake
def _(a, b, *args):
    return torch.empty(torch.broadcast_shapes(a.shape, b.shape), dtype=torch.int8)


@qrelu.register_fake
def _(x, *args):
    return torch.empty_like(x)


@qconv2d.register_fake
def _(x, weight, bias, stride, padding, dilation, groups, *args):
    sizes = [
        (x.shape[2 + i] + 2 * padding[i] - dilation[i] * (weight.shape[2 + i] - 1) - 1) // stride[i] + 1
        for i in range(2)
    ]
    return x.new_empty((x.shape[0], weight.shape[0], *sizes))
