"""Elementwise arithmetic, rounding and math functions.

Tolerances (see conformance.operators.spec): IEEE-rounded operations (add, sub,
mul, div, sqrt) within ROUNDED (2 ULP); exact ones (neg, abs, floor, ceil,
round, trunc, max/min, clamp, integer arithmetic) EXACT; transcendental ones
(exp, log*, pow, rsqrt) TRANSCENDENTAL (4 ULP). Integer results are always
exact; stress values for integers never overflow.
"""

from __future__ import annotations

import torch

from conformance.operators.generators import binary, unary
from conformance.operators.spec import (
    ALL,
    EXACT,
    FLOATS,
    NUMERIC,
    ROUNDED,
    TRANSCENDENTAL,
    Operator,
    Tolerance,
)

F = "elementwise"
#: rsqrt is not IEEE-rounded anywhere; sqrt is, but a backend may compute 1/sqrt as a single approximation.
RSQRT = Tolerance(4, 4, "1/sqrt(x) in two roundings, or an approximation refined to within 3 ULP")

OPERATORS = (
    Operator("aten::add.Tensor", F, ALL, binary("aten::add.Tensor", torch.add, ROUNDED, special=True)),
    Operator("aten::sub.Tensor", F, NUMERIC, binary("aten::sub.Tensor", torch.sub, ROUNDED, special=True)),
    Operator("aten::mul.Tensor", F, ALL, binary("aten::mul.Tensor", torch.mul, ROUNDED, special=True)),
    Operator(
        "aten::div.Tensor",
        F,
        FLOATS,
        binary("aten::div.Tensor", torch.div, ROUNDED, "normal", "positive", stress=None, special=True),
        note="true division; integer operands promote to float and are not cases here",
    ),
    Operator(
        "aten::div.Tensor_mode",
        F,
        FLOATS + ("int32", "int64"),
        binary(
            "aten::div.Tensor_mode",
            lambda a, b: torch.div(a, b, rounding_mode="floor"),
            EXACT,
            "normal",
            "positive",
            stress=None,
            args="rounding_mode='floor'",
        ),
        note="floor division (torch.floor_divide); the quotient is rounded before flooring, hence EXACT",
    ),
    Operator(
        "aten::pow.Tensor_Tensor",
        F,
        FLOATS,
        binary("aten::pow.Tensor_Tensor", torch.pow, TRANSCENDENTAL, "positive", "range:-3:3", stress=None),
    ),
    Operator(
        "aten::pow.Tensor_Scalar",
        F,
        FLOATS + ("int32", "int64"),
        unary("aten::pow.Tensor_Scalar", lambda x: torch.pow(x, 2), ROUNDED, stress=None, args="exponent=2"),
        note="x**2 and torch.square export as pow.Tensor_Scalar; one multiplication",
    ),
    Operator("aten::maximum", F, ALL, binary("aten::maximum", torch.maximum, EXACT, special=True)),
    Operator("aten::minimum", F, ALL, binary("aten::minimum", torch.minimum, EXACT, special=True)),
    Operator("aten::neg", F, NUMERIC, unary("aten::neg", torch.neg, EXACT, special=True)),
    Operator("aten::abs", F, NUMERIC, unary("aten::abs", torch.abs, EXACT, special=True)),
    Operator("aten::ceil", F, FLOATS, unary("aten::ceil", torch.ceil, EXACT, "range:-20:20", special=True)),
    Operator(
        "aten::floor", F, FLOATS, unary("aten::floor", torch.floor, EXACT, "range:-20:20", special=True)
    ),
    Operator(
        "aten::trunc", F, FLOATS, unary("aten::trunc", torch.trunc, EXACT, "range:-20:20", special=True)
    ),
    Operator(
        "aten::round",
        F,
        FLOATS,
        unary("aten::round", torch.round, EXACT, "range:-20:20", special=True),
        note="halves round to even",
    ),
    Operator(
        "aten::sqrt",
        F,
        FLOATS,
        unary("aten::sqrt", torch.sqrt, ROUNDED, "positive", stress="stress:positive", special=True),
    ),
    Operator(
        "aten::rsqrt",
        F,
        FLOATS,
        unary("aten::rsqrt", torch.rsqrt, RSQRT, "positive", stress="stress:positive", special=True),
    ),
    Operator(
        "aten::exp", F, FLOATS, unary("aten::exp", torch.exp, TRANSCENDENTAL, "range:-20:20", special=True)
    ),
    Operator(
        "aten::log",
        F,
        FLOATS,
        unary("aten::log", torch.log, TRANSCENDENTAL, "positive", stress="stress:positive", special=True),
    ),
    Operator(
        "aten::log2",
        F,
        FLOATS,
        unary("aten::log2", torch.log2, TRANSCENDENTAL, "positive", stress="stress:positive", special=True),
    ),
    Operator(
        "aten::log10",
        F,
        FLOATS,
        unary("aten::log10", torch.log10, TRANSCENDENTAL, "positive", stress="stress:positive", special=True),
    ),
    Operator(
        "aten::log1p",
        F,
        FLOATS,
        unary("aten::log1p", torch.log1p, TRANSCENDENTAL, "positive", stress="stress:positive", special=True),
    ),
    Operator(
        "aten::clamp",
        F,
        NUMERIC,
        unary(
            "aten::clamp",
            lambda x: torch.clamp(x, -0.5, 0.75) if x.is_floating_point() else torch.clamp(x, -5, 7),
            EXACT,
            special=True,
            args="min=-0.5 (-5), max=0.75 (7)",
        ),
    ),
)
