"""Pooling and resampling.

Max pooling selects an input (EXACT, distinct values so the indices are
unique); average pooling and adaptive average pooling are sums of the window
divided by its size: ACCUMULATE with K the window size. Bilinear upsampling
interpolates between four inputs: ACCUMULATE with K = 4; nearest upsampling
copies: EXACT.
"""

from __future__ import annotations

import torch.nn.functional as nnf

from conformance.operators.generators import I, listed
from conformance.operators.spec import ACCUMULATE, EXACT, FLOAT32, FLOATS, Operator

F = "pooling"

AVG2D = (
    ("k2_s2", lambda x: nnf.avg_pool2d(x, 2, 2), (I((2, 3, 8, 8)),), (), "kernel 2, stride 2", 4),
    (
        "k3_s1_pad",
        lambda x: nnf.avg_pool2d(x, 3, 1, 1),
        (I((1, 4, 7, 7)),),
        (),
        "kernel 3, stride 1, padding 1",
        9,
    ),
    ("k3_s2_ceil", lambda x: nnf.avg_pool2d(x, 3, 2, ceil_mode=True), (I((1, 2, 8, 8)),), (), "ceil_mode", 9),
    (
        "exclude_pad",
        lambda x: nnf.avg_pool2d(x, 3, 1, 1, count_include_pad=False),
        (I((1, 2, 5, 5)),),
        (),
        "count_include_pad=False",
        9,
    ),
    (
        "rect",
        lambda x: nnf.avg_pool2d(x, (2, 3), (1, 2)),
        (I((2, 2, 6, 9)),),
        (),
        "kernel 2x3, stride 1x2",
        6,
    ),
    (
        "channels_last",
        lambda x: nnf.avg_pool2d(x, 2, 2),
        (I((1, 3, 6, 6), channels_last=True),),
        {"channels_last"},
        "kernel 2",
        4,
    ),
    ("output1x1", lambda x: nnf.avg_pool2d(x, 4), (I((1, 1, 4, 4)),), (), "the whole input", 16),
)
AVG1D = (
    ("k2", lambda x: nnf.avg_pool1d(x, 2), (I((2, 3, 10)),), (), "kernel 2", 2),
    ("k3_s1_pad", lambda x: nnf.avg_pool1d(x, 3, 1, 1), (I((1, 4, 9)),), (), "kernel 3, padding 1", 3),
)
AVG3D = (
    ("k2", lambda x: nnf.avg_pool3d(x, 2), (I((1, 2, 4, 4, 4)),), (), "kernel 2", 8),
    ("k3_pad", lambda x: nnf.avg_pool3d(x, 3, 1, 1), (I((1, 1, 3, 4, 5)),), (), "kernel 3, padding 1", 27),
)
MAX2D = (
    ("k2_s2", lambda x: nnf.max_pool2d(x, 2, 2), (I((2, 3, 8, 8), "distinct"),), (), "kernel 2, stride 2"),
    (
        "k3_s1_pad",
        lambda x: nnf.max_pool2d(x, 3, 1, 1),
        (I((1, 4, 7, 7), "distinct"),),
        (),
        "kernel 3, padding 1",
    ),
    (
        "k3_s2_ceil",
        lambda x: nnf.max_pool2d(x, 3, 2, ceil_mode=True),
        (I((1, 2, 8, 8), "distinct"),),
        (),
        "ceil_mode",
    ),
    (
        "dilation",
        lambda x: nnf.max_pool2d(x, 2, 1, dilation=2),
        (I((1, 2, 7, 7), "distinct"),),
        (),
        "dilation 2",
    ),
    (
        "channels_last",
        lambda x: nnf.max_pool2d(x, 2, 2),
        (I((1, 3, 6, 6), "distinct", channels_last=True),),
        {"channels_last"},
        "kernel 2",
    ),
    (
        "with_indices",
        lambda x: nnf.max_pool2d(x, 2, 2, return_indices=True),
        (I((1, 2, 6, 6), "distinct"),),
        (),
        "return_indices",
    ),
    (
        "stress",
        lambda x: nnf.max_pool2d(x, 2, 2),
        (I((1, 2, 4, 4), "special"),),
        {"stress", "inf_nan"},
        "kernel 2; -inf, inf and NaN in windows",
    ),
)
MAX1D = (
    ("k2", lambda x: nnf.max_pool1d(x, 2), (I((2, 3, 10), "distinct"),), (), "kernel 2"),
    ("k3_pad", lambda x: nnf.max_pool1d(x, 3, 1, 1), (I((1, 2, 9), "distinct"),), (), "kernel 3, padding 1"),
)
MAX3D = (("k2", lambda x: nnf.max_pool3d(x, 2), (I((1, 2, 4, 4, 4), "distinct"),), (), "kernel 2"),)
ADAPTIVE_AVG2D = (
    ("divisible", lambda x: nnf.adaptive_avg_pool2d(x, (2, 3)), (I((1, 3, 6, 9)),), (), "output 2x3", 9),
    (
        "non_divisible",
        lambda x: nnf.adaptive_avg_pool2d(x, (3, 2)),
        (I((1, 2, 7, 5)),),
        (),
        "output 3x2 of 7x5",
        9,
    ),
)
ADAPTIVE_AVG1D = (
    ("divisible", lambda x: nnf.adaptive_avg_pool1d(x, 3), (I((2, 3, 9)),), (), "output 3 of 9", 3),
)
ADAPTIVE_AVG3D = (
    ("divisible", lambda x: nnf.adaptive_avg_pool3d(x, 2), (I((1, 2, 4, 4, 4)),), (), "output 2x2x2", 8),
)
#: adaptive_max_pool1d/2d/3d are not Core ATen: to_edge refuses it, so it has no cases (ExecuTorch's suite has a file).
BILINEAR = (
    (
        "scale2",
        lambda x: nnf.interpolate(x, scale_factor=2.0, mode="bilinear"),
        (I((1, 3, 4, 5)),),
        (),
        "scale 2, align_corners=False",
        4,
    ),
    (
        "size_align",
        lambda x: nnf.interpolate(x, size=(7, 9), mode="bilinear", align_corners=True),
        (I((2, 2, 4, 4)),),
        (),
        "size 7x9, align_corners=True",
        4,
    ),
    (
        "downscale",
        lambda x: nnf.interpolate(x, size=(3, 3), mode="bilinear"),
        (I((1, 1, 6, 6)),),
        (),
        "size 3x3",
        4,
    ),
)
NEAREST = (
    (
        "scale2",
        lambda x: nnf.interpolate(x, scale_factor=2.0, mode="nearest"),
        (I((1, 3, 4, 5)),),
        (),
        "scale 2",
    ),
    ("size", lambda x: nnf.interpolate(x, size=(7, 3), mode="nearest"), (I((2, 2, 4, 4)),), (), "size 7x3"),
)

OPERATORS = (
    Operator("aten::avg_pool2d", F, FLOATS, listed("aten::avg_pool2d", AVG2D, ACCUMULATE)),
    Operator(
        "aten::avg_pool1d",
        F,
        FLOATS,
        listed("aten::avg_pool1d", AVG1D, ACCUMULATE),
        composite=True,
        note="to_edge makes it unsqueeze_copy + avg_pool2d + squeeze_copy",
    ),
    Operator(
        "aten::avg_pool3d",
        F,
        (FLOAT32,),
        listed("aten::avg_pool3d", AVG3D, ACCUMULATE),
        note="ATen's CPU kernel has no float16/bfloat16",
    ),
    Operator(
        "aten::max_pool2d_with_indices",
        F,
        FLOATS,
        listed("aten::max_pool2d_with_indices", MAX2D, EXACT),
        note="nn.MaxPool2d exports as max_pool2d_with_indices (the values are its first output)",
    ),
    Operator(
        "aten::max_pool1d",
        F,
        FLOATS,
        listed("aten::max_pool1d", MAX1D, EXACT),
        composite=True,
        note="to_edge makes it unsqueeze_copy + max_pool2d_with_indices + squeeze_copy",
    ),
    Operator(
        "aten::max_pool3d_with_indices", F, FLOATS, listed("aten::max_pool3d_with_indices", MAX3D, EXACT)
    ),
    Operator(
        "aten::_adaptive_avg_pool2d",
        F,
        FLOATS,
        listed("aten::_adaptive_avg_pool2d", ADAPTIVE_AVG2D, ACCUMULATE),
        note="an output of 1x1 exports as mean.dim instead (a case of aten::mean.dim)",
    ),
    Operator(
        "aten::adaptive_avg_pool1d",
        F,
        FLOATS,
        listed("aten::adaptive_avg_pool1d", ADAPTIVE_AVG1D, ACCUMULATE),
        composite=True,
        note="to_edge makes it unsqueeze_copy + _adaptive_avg_pool2d + squeeze_copy",
    ),
    Operator(
        "aten::_adaptive_avg_pool3d",
        F,
        (FLOAT32,),
        listed("aten::_adaptive_avg_pool3d", ADAPTIVE_AVG3D, ACCUMULATE),
    ),
    Operator(
        "aten::upsample_bilinear2d.vec",
        F,
        FLOATS,
        listed("aten::upsample_bilinear2d.vec", BILINEAR, ACCUMULATE),
    ),
    Operator(
        "aten::upsample_nearest2d.vec", F, FLOATS, listed("aten::upsample_nearest2d.vec", NEAREST, EXACT)
    ),
)
