"""Reductions over one or more dimensions.

sum and mean are K-term sums: ACCUMULATE (K listed per case; the magnitude is
the sum of |x|). amax, amin, argmax and argmin select one input: EXACT, and
argmax/argmin inputs have distinct values so that no tie makes the index
ambiguous. Integer sums are exact.
"""

from __future__ import annotations

import torch

from conformance.operators.generators import I, listed
from conformance.operators.spec import ACCUMULATE, ALL, EXACT, FLOATS, NUMERIC, Operator

F = "reductions"


def _rows(fn, name_of, values="normal"):
    """The same dims for every reduction: (name, fn, inputs, traits, args, K)."""
    return (
        ("rank1_all", lambda x: fn(x, [0], False), (I((33,), values),), (), "dim=[0]", 33),
        ("rank2_last", lambda x: fn(x, [-1], False), (I((5, 17), values),), (), "dim=[-1]", 17),
        ("rank2_first_keepdim", lambda x: fn(x, [0], True), (I((6, 4), values),), (), "dim=[0], keepdim", 6),
        ("rank3_middle", lambda x: fn(x, [1], False), (I((2, 7, 3), values),), (), "dim=[1]", 7),
        (
            "rank4_two_dims",
            lambda x: fn(x, [2, 3], True),
            (I((2, 3, 4, 5), values),),
            (),
            "dim=[2, 3], keepdim",
            20,
        ),
        (
            "rank4_channels_last",
            lambda x: fn(x, [1], False),
            (I((2, 3, 4, 5), values, channels_last=True),),
            {"channels_last"},
            "dim=[1]",
            3,
        ),
        ("size1_dim", lambda x: fn(x, [1], False), (I((4, 1, 3), values),), (), "dim=[1] of size 1", 1),
        ("long", lambda x: fn(x, [-1], False), (I((3, 4099), values),), {"large"}, "dim=[-1]", 4099),
        ("stress", lambda x: fn(x, [-1], False), (I((4, 6), "range:-1000:1000"),), {"stress"}, "dim=[-1]", 6),
    )


def _sum(x, dims, keep):
    return torch.sum(x, dims, keep)


def _mean(x, dims, keep):
    return torch.mean(x, dims, keep)


def _amax(x, dims, keep):
    return torch.amax(x, dims, keep)


def _amin(x, dims, keep):
    return torch.amin(x, dims, keep)


def _arg(fn):
    """argmax/argmin take one dim: the rows' first dim."""
    return lambda x, dims, keep: fn(x, dims[0], keep)


def _arg_rows(fn):
    return tuple(row for row in _rows(_arg(fn), None, "distinct") if row[0] != "rank4_two_dims")


OPERATORS = (
    Operator(
        "aten::sum.dim_IntList",
        F,
        ALL,
        listed("aten::sum.dim_IntList", _rows(_sum, "sum"), ACCUMULATE),
        note="bool and integer sums are exact (bool sums to int64)",
    ),
    Operator("aten::mean.dim", F, FLOATS, listed("aten::mean.dim", _rows(_mean, "mean"), ACCUMULATE)),
    Operator("aten::amax", F, NUMERIC, listed("aten::amax", _rows(_amax, "amax"), EXACT)),
    Operator("aten::amin", F, NUMERIC, listed("aten::amin", _rows(_amin, "amin"), EXACT)),
    Operator(
        "aten::argmax",
        F,
        NUMERIC,
        listed("aten::argmax", _arg_rows(torch.argmax), EXACT),
        note="distinct input values: no ties",
    ),
    Operator(
        "aten::argmin",
        F,
        NUMERIC,
        listed("aten::argmin", _arg_rows(torch.argmin), EXACT),
        note="distinct input values: no ties",
    ),
)
