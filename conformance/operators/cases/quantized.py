"""Quantized operator cases: dequantize -> operator -> quantize, as PT2E's ``convert_pt2e`` leaves them.

Each case takes int8 tensors, dequantizes them (``quantized_decomposed::dequantize_per_tensor``, scale and
zero point fixed by the case), applies a float operator and quantizes the result
(``quantize_per_tensor``); weights are int8 constants dequantized per tensor, biases float. A backend
that declares quantized support (``BackendDescriptor.quantized``) and ``quantize_per_tensor`` gets the
cases whose float operators it also declares (``Case.requires``): the partitioner must claim the whole
pattern (C-OPS-1) and the int8 outputs must be within the descriptor's ``max_steps`` quantization steps of
eager PyTorch's (C-OPS-2; an integer kernel rounds its requantization differently from float arithmetic).
The cases are listed under ``quantize_per_tensor`` with dtype float32, the dtype the pattern computes in.
"""

from __future__ import annotations

import torch
import torch.nn.functional as nnf

from conformance.operators.spec import FLOAT32, INT8, Case, Input, Operator, Tolerance, with_constants

F = "quantized"
#: Within the descriptor's max_steps quantization steps of the output (its integer units).
STEPS = Tolerance(
    0, 0, "integer requantization rounds differently from float: the declared max_steps", steps=True
)


def _dq(t, scale: float, zero: int, qmin: int = -128):
    return torch.ops.quantized_decomposed.dequantize_per_tensor(t, scale, zero, qmin, 127, torch.int8)


def _q(t, scale: float, zero: int):
    return torch.ops.quantized_decomposed.quantize_per_tensor(t, scale, zero, -128, 127, torch.int8)


def _relu(a):
    return _q(torch.relu(_dq(a, 0.05, 3)), 0.05, 3)


def _add(a, b):
    return _q(_dq(a, 0.05, 3) + _dq(b, 0.04, -2), 0.08, -10)


def _add_relu(a, b):
    return _q(torch.relu(_dq(a, 0.05, 3) + _dq(b, 0.04, -2)), 0.06, -128)


def _saturating_add(a, b):
    # An output scale too small for the sum: most results clamp at -128 or 127.
    return _q(_dq(a, 0.1, 0) + _dq(b, 0.1, 0), 0.02, 0)


def _linear(x, w, b):
    return _q(nnf.linear(_dq(x, 0.05, 3), _dq(w, 0.01, 0, -127), b), 0.1, -4)


def _conv2d(x, w, b):
    return _q(nnf.conv2d(_dq(x, 0.05, 3), _dq(w, 0.01, 0, -127), b, padding=1), 0.1, 2)


def _int8(shape: tuple[int, ...], constant: bool = False) -> Input:
    return Input(shape, INT8, "range:-128:128" if not constant else "range:-127:128", constant=constant)


def _cases(dtype: str) -> list[Case]:
    op = "quantized_decomposed::quantize_per_tensor"
    bias8 = Input((8,), FLOAT32, "unit", constant=True)
    rows = (
        ("relu", _relu, (_int8((4, 6)),), ("aten::relu",), "dequantize, relu, quantize"),
        (
            "add",
            _add,
            (_int8((4, 6)), _int8((4, 6))),
            ("aten::add.Tensor",),
            "two input scales, one output scale",
        ),
        (
            "add_relu",
            _add_relu,
            (_int8((2, 3, 5)), _int8((2, 3, 5))),
            ("aten::add.Tensor", "aten::relu"),
            "add then relu, output zero point -128",
        ),
        (
            "add_saturating",
            _saturating_add,
            (_int8((6, 8)), _int8((6, 8))),
            ("aten::add.Tensor",),
            "results beyond int8: clamped to -128..127",
        ),
        (
            "linear",
            _linear,
            (_int8((4, 16)), _int8((8, 16), constant=True), bias8),
            ("aten::linear",),
            "int8 weight per tensor, float bias",
        ),
        (
            "conv2d",
            _conv2d,
            (_int8((1, 3, 6, 6)), _int8((8, 3, 3, 3), constant=True), bias8),
            ("aten::convolution",),
            "3x3, padding 1, int8 weight per tensor, float bias",
        ),
    )
    return [
        Case(
            op,
            dtype,
            name,
            inputs,
            with_constants(fn, inputs),
            STEPS,
            frozenset({"quantized"}),
            0,
            args,
            requires,
        )
        for name, fn, inputs, requires, args in rows
    ]


OPERATORS = (
    Operator(
        "quantized_decomposed::quantize_per_tensor",
        F,
        (FLOAT32,),
        _cases,
        note="dequantize -> operator -> quantize patterns; only for a backend that declares quantized support",
    ),
)
