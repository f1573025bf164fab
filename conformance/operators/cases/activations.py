"""Activation functions.

relu, hardtanh, threshold, leaky_relu and prelu are selections or one
multiplication: EXACT or ROUNDED. sigmoid, tanh, gelu, elu, silu, logsigmoid
and glu use a transcendental function: TRANSCENDENTAL or COMPOSITE (8 ULP,
a few rounded steps around it). hardsigmoid and hardswish are piecewise linear:
ROUNDED for two roundings (x/6 + 0.5) and one more for hardswish's product.
"""

from __future__ import annotations

import torch
import torch.nn.functional as nnf

from conformance.operators.generators import I, listed, unary
from conformance.operators.spec import (
    COMPOSITE,
    EXACT,
    FLOATS,
    NUMERIC,
    ROUNDED,
    TRANSCENDENTAL,
    Operator,
    Tolerance,
)

F = "activations"
PIECEWISE = Tolerance(4, 4, "x/6 + 1/2 (and a product for hardswish): up to three roundings, and 1/6 inexact")
#: gelu = x/2 * (1 + erf(x/sqrt 2)) cancels for negative x: eager's own float32 result is off by a few ULP
#: of |x| there (13750 ULP of the result at x = -3.48, measured against float64), so the absolute part
#: scales with the case's largest |x| (per_term), as for a sum of terms.
GELU = Tolerance(
    8, 8, "a transcendental and a cancellation 1 + erf(x) for negative x: 8 ULP of |x|", per_term=True
)

OPERATORS = (
    Operator("aten::relu", F, NUMERIC, unary("aten::relu", torch.relu, EXACT, special=True)),
    Operator(
        "aten::sigmoid",
        F,
        FLOATS,
        unary("aten::sigmoid", torch.sigmoid, TRANSCENDENTAL, "range:-12:12", special=True),
    ),
    Operator(
        "aten::tanh", F, FLOATS, unary("aten::tanh", torch.tanh, TRANSCENDENTAL, "range:-6:6", special=True)
    ),
    Operator(
        "aten::gelu",
        F,
        FLOATS,
        unary("aten::gelu", nnf.gelu, GELU, "range:-6:6", special=True, args="approximate='none'"),
    ),
    Operator(
        "aten::silu",
        F,
        FLOATS,
        unary("aten::silu", nnf.silu, COMPOSITE, "range:-8:8", special=True),
        composite=True,
        note="to_edge makes it sigmoid + mul",
    ),
    Operator(
        "aten::log_sigmoid_forward",
        F,
        FLOATS,
        unary("aten::log_sigmoid_forward", nnf.logsigmoid, COMPOSITE, "range:-20:20", special=True),
        composite=True,
        note="nn.LogSigmoid; to_edge makes it minimum, abs, neg, exp, log1p, sub",
    ),
    Operator("aten::elu", F, FLOATS, unary("aten::elu", nnf.elu, COMPOSITE, "range:-6:6", special=True)),
    Operator(
        "aten::leaky_relu",
        F,
        FLOATS,
        unary(
            "aten::leaky_relu",
            lambda x: nnf.leaky_relu(x, 0.1),
            ROUNDED,
            special=True,
            args="negative_slope=0.1",
        ),
    ),
    Operator(
        "aten::hardtanh",
        F,
        FLOATS + ("int32", "int64"),
        unary(
            "aten::hardtanh",
            lambda x: nnf.hardtanh(x, -1.0, 1.0),
            EXACT,
            special=True,
            args="min_val=-1, max_val=1",
        ),
    ),
    Operator(
        "aten::hardsigmoid",
        F,
        FLOATS,
        unary("aten::hardsigmoid", nnf.hardsigmoid, PIECEWISE, "range:-5:5", special=True),
        composite=True,
        note="to_edge makes it add + clamp + div (unless the partitioner keeps it whole)",
    ),
    Operator(
        "aten::hardswish",
        F,
        FLOATS,
        # x * relu6(x + 3) / 6 overflows in eager at x = max/4 (x * 6) though the result, x, is finite
        unary(
            "aten::hardswish", nnf.hardswish, PIECEWISE, "range:-5:5", stress="stress:moderate", special=True
        ),
        composite=True,
        note="to_edge makes it add + clamp + div + mul (unless the partitioner keeps it whole)",
    ),
    Operator(
        "aten::threshold",
        F,
        FLOATS + ("int32", "int64"),
        unary(
            "aten::threshold",
            lambda x: nnf.threshold(x, 0.25, -2.0),
            EXACT,
            special=True,
            args="threshold=0.25, value=-2",
        ),
        composite=True,
        note="to_edge makes it le.Scalar + scalar_tensor + where.self",
    ),
    Operator(
        "aten::glu",
        F,
        FLOATS,
        listed(
            "aten::glu",
            (
                ("rank1", lambda x: nnf.glu(x, -1), (I((8,)),), (), "dim=-1"),
                ("rank2_dim0", lambda x: nnf.glu(x, 0), (I((6, 5)),), (), "dim=0"),
                ("rank4", lambda x: nnf.glu(x, 1), (I((2, 4, 3, 5)),), (), "dim=1"),
                ("size1_halves", lambda x: nnf.glu(x, -1), (I((3, 2)),), (), "dim=-1"),
            ),
            COMPOSITE,
        ),
        composite=True,
        note="to_edge makes it slice_copy + sigmoid + mul",
    ),
    Operator(
        "aten::_prelu_kernel",
        F,
        FLOATS,
        listed(
            "aten::_prelu_kernel",
            (
                (
                    "rank4_channels",
                    lambda x, w: nnf.prelu(x, w),
                    (I((2, 3, 4, 5)), I((3,), constant=True)),
                    (),
                    "weight per channel",
                ),
                (
                    "rank2_single",
                    lambda x, w: nnf.prelu(x, w),
                    (I((5, 6)), I((1,), constant=True)),
                    (),
                    "one weight",
                ),
                ("rank1", lambda x, w: nnf.prelu(x, w), (I((9,)), I((1,), constant=True)), (), "one weight"),
            ),
            ROUNDED,
        ),
        composite=True,
        note="nn.PReLU; to_edge makes it gt.Scalar + mul + where.self (+ view_copy of the weight)",
    ),
    Operator(
        "aten::_softmax",
        F,
        FLOATS,
        listed(
            "aten::_softmax",
            (
                ("rank1", lambda x: torch.softmax(x, -1), (I((10,)),), (), "dim=-1"),
                ("rank2", lambda x: torch.softmax(x, -1), (I((4, 33)),), (), "dim=-1"),
                ("rank3_dim1", lambda x: torch.softmax(x, 1), (I((2, 7, 3)),), (), "dim=1"),
                ("rank4", lambda x: torch.softmax(x, -1), (I((2, 3, 4, 5)),), (), "dim=-1"),
                ("size1", lambda x: torch.softmax(x, -1), (I((3, 1)),), (), "dim=-1"),
                (
                    "large_values",
                    lambda x: torch.softmax(x, -1),
                    (I((4, 8), "range:-80:80"),),
                    {"stress"},
                    "dim=-1; needs the max subtracted first",
                ),
            ),
            COMPOSITE,
        ),
    ),
    Operator(
        "aten::_log_softmax",
        F,
        FLOATS,
        listed(
            "aten::_log_softmax",
            (
                ("rank1", lambda x: torch.log_softmax(x, -1), (I((10,)),), (), "dim=-1"),
                ("rank2", lambda x: torch.log_softmax(x, -1), (I((4, 33)),), (), "dim=-1"),
                ("rank4_dim1", lambda x: torch.log_softmax(x, 1), (I((2, 3, 4, 5)),), (), "dim=1"),
                (
                    "large_values",
                    lambda x: torch.log_softmax(x, -1),
                    (I((4, 8), "range:-80:80"),),
                    {"stress"},
                    "dim=-1",
                ),
            ),
            COMPOSITE,
        ),
    ),
)
