"""Matrix products and convolutions: sums of K products.

Tolerance ACCUMULATE: the worst-case rounding error of a K-term sum is about
K ULP of the sum of the terms' magnitudes, whatever the order (Higham's
gamma_K); the suite computes that magnitude per case as the same operator on
the inputs' absolute values in float64, and K is listed with each case.
"""

from __future__ import annotations

import torch
import torch.nn.functional as nnf

from conformance.operators.generators import I, InputOptions, listed
from conformance.operators.spec import ACCUMULATE, FLOATS, Operator

F = "linear_conv"
W = InputOptions(constant=True)


def _linear(x, w, b=None):
    return nnf.linear(x, w, b)


LINEAR = (
    ("rank2_bias", _linear, (I((4, 16)), I((8, 16), **W), I((8,), **W)), (), "bias", 16),
    ("rank2_no_bias", _linear, (I((4, 16)), I((8, 16), **W)), (), "no bias", 16),
    ("rank1", _linear, (I((16,)), I((5, 16), **W), I((5,), **W)), (), "bias", 16),
    ("rank3", _linear, (I((2, 3, 32)), I((7, 32), **W), I((7,), **W)), (), "bias", 32),
    ("rank4", _linear, (I((2, 2, 3, 8)), I((4, 8), **W), I((4,), **W)), (), "bias", 8),
    ("batch1_out1", _linear, (I((1, 9)), I((1, 9), **W), I((1,), **W)), (), "bias", 9),
    ("long_reduction", _linear, (I((3, 1024)), I((6, 1024), **W), I((6,), **W)), (), "bias", 1024),
    (
        "large_magnitude",
        _linear,
        (I((4, 16), "range:-3000:3000"), I((8, 16), **W), I((8,), **W)),
        {"stress"},
        "bias",
        16,
    ),
    # Bounded dynamic rows (and tokens): planned for the bound, run below it; only for a linear declared dynamic.
    (
        "dynamic_rows",
        _linear,
        (I((3, 16), dynamic=((0, 8),)), I((8, 16), **W), I((8,), **W)),
        {"dynamic"},
        "bias",
        16,
    ),
    (
        "dynamic_rank3",
        _linear,
        (I((2, 5, 16), dynamic=((0, 4), (1, 8))), I((8, 16), **W), I((8,), **W)),
        {"dynamic"},
        "bias",
        16,
    ),
)

MM = (
    ("square", torch.mm, (I((8, 8)), I((8, 8))), (), "", 8),
    ("tall_wide", torch.mm, (I((13, 5)), I((5, 11))), (), "", 5),
    ("vector_like", torch.mm, (I((1, 64)), I((64, 1))), (), "", 64),
    ("long_reduction", torch.mm, (I((4, 2048)), I((2048, 3))), (), "", 2048),
)

BMM = (
    ("batch3", torch.bmm, (I((3, 4, 5)), I((3, 5, 6))), (), "", 5),
    ("batch1", torch.bmm, (I((1, 7, 9)), I((1, 9, 2))), (), "", 9),
    ("size1", torch.bmm, (I((2, 1, 1)), I((2, 1, 1))), (), "", 1),
)

ADDMM = (
    ("bias_row", lambda b, x, y: torch.addmm(b, x, y), (I((6,)), I((4, 5)), I((5, 6))), {"broadcast"}, "", 5),
    ("bias_full", lambda b, x, y: torch.addmm(b, x, y), (I((4, 6)), I((4, 5)), I((5, 6))), (), "", 5),
)


def _conv(dims: int, transposed: bool = False):
    fn = {
        (1, False): nnf.conv1d,
        (2, False): nnf.conv2d,
        (3, False): nnf.conv3d,
        (1, True): nnf.conv_transpose1d,
        (2, True): nnf.conv_transpose2d,
        (3, True): nnf.conv_transpose3d,
    }
    return fn[(dims, transposed)]


def _c(dims, transposed=False, **kw):
    f = _conv(dims, transposed)
    return lambda x, w, b=None: f(x, w, b, **kw)


CONVOLUTION = (
    # name, fn, inputs, traits, args, K = in_channels/groups * kernel elements
    ("conv1d", _c(1), (I((2, 3, 10)), I((4, 3, 3), **W), I((4,), **W)), (), "1-D, k=3", 9),
    (
        "conv1d_stride_pad",
        _c(1, stride=2, padding=1),
        (I((1, 4, 11)), I((2, 4, 3), **W)),
        (),
        "1-D, stride 2, padding 1, no bias",
        12,
    ),
    ("conv2d", _c(2), (I((2, 3, 8, 8)), I((5, 3, 3, 3), **W), I((5,), **W)), (), "2-D, 3x3", 27),
    ("conv2d_1x1", _c(2), (I((1, 16, 5, 5)), I((8, 16, 1, 1), **W), I((8,), **W)), (), "2-D, 1x1", 16),
    (
        "conv2d_stride_pad_dilation",
        _c(2, stride=2, padding=2, dilation=2),
        (I((1, 4, 9, 9)), I((6, 4, 3, 3), **W), I((6,), **W)),
        (),
        "stride 2, padding 2, dilation 2",
        36,
    ),
    (
        "conv2d_groups",
        _c(2, groups=2),
        (I((1, 4, 6, 6)), I((6, 2, 3, 3), **W), I((6,), **W)),
        (),
        "groups 2",
        18,
    ),
    (
        "conv2d_depthwise",
        _c(2, groups=8, padding=1),
        (I((2, 8, 7, 7)), I((8, 1, 3, 3), **W), I((8,), **W)),
        (),
        "depthwise, padding 1",
        9,
    ),
    (
        "conv2d_channels_last",
        _c(2),
        (I((2, 3, 8, 8), channels_last=True), I((4, 3, 3, 3), **W), I((4,), **W)),
        {"channels_last"},
        "3x3",
        27,
    ),
    ("conv2d_batch1_out1", _c(2), (I((1, 1, 3, 3)), I((1, 1, 3, 3), **W), I((1,), **W)), (), "output 1x1", 9),
    (
        "conv3d",
        _c(3, padding=1),
        (I((1, 2, 4, 5, 5)), I((3, 2, 3, 3, 3), **W), I((3,), **W)),
        (),
        "3-D, padding 1",
        54,
    ),
    (
        "conv_transpose1d",
        _c(1, True, stride=2),
        (I((2, 3, 6)), I((3, 4, 3), **W), I((4,), **W)),
        (),
        "transposed 1-D, stride 2",
        9,
    ),
    (
        "conv_transpose2d",
        _c(2, True, stride=2, padding=1),
        (I((1, 4, 5, 5)), I((4, 3, 3, 3), **W), I((3,), **W)),
        (),
        "transposed 2-D, stride 2, padding 1",
        36,
    ),
    (
        "conv_transpose2d_output_padding",
        _c(2, True, stride=2, output_padding=1),
        (I((1, 2, 3, 3)), I((2, 2, 3, 3), **W)),
        (),
        "transposed 2-D, output_padding 1, no bias",
        18,
    ),
    (
        "conv_transpose3d",
        _c(3, True),
        (I((1, 2, 3, 3, 3)), I((2, 2, 2, 2, 2), **W), I((2,), **W)),
        (),
        "transposed 3-D",
        16,
    ),
)

OPERATORS = (
    Operator(
        "aten::linear",
        F,
        FLOATS,
        listed("aten::linear", LINEAR, ACCUMULATE),
        kept_whole=True,
        note="reaches the partitioner only if its ops_to_not_decompose keeps it; else it becomes "
        "permute_copy + addmm/mm",
    ),
    Operator("aten::mm", F, FLOATS, listed("aten::mm", MM, ACCUMULATE)),
    Operator("aten::bmm", F, FLOATS, listed("aten::bmm", BMM, ACCUMULATE)),
    Operator("aten::addmm", F, FLOATS, listed("aten::addmm", ADDMM, ACCUMULATE)),
    Operator(
        "aten::convolution",
        F,
        FLOATS,
        listed("aten::convolution", CONVOLUTION, ACCUMULATE),
        note="conv1d/2d/3d and their transposes all export as aten::convolution",
    ),
)
