"""Gathers, scatters, masks and embedding lookups, and the recurrent layer.

Selections and masked writes are EXACT (index_put's accumulate case uses
integer values, so its sums are exact too). lstm is checked as a whole: each step is a matrix
product over input + hidden size followed by sigmoid and tanh, so ACCUMULATE
with K = input + hidden size.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as nnf

from conformance.operators.generators import I, InputOptions, listed
from conformance.operators.spec import ACCUMULATE, ALL, BOOL, FLOAT32, FLOATS, INT64, Operator

F = "indexing"
IDX = InputOptions(dtype=INT64)

INDEX_SELECT = (
    (
        "rank2_dim0",
        lambda x, i: torch.index_select(x, 0, i),
        (I((5, 3)), I((4,), "index:5", **IDX)),
        (),
        "dim=0",
    ),
    (
        "rank3_dim2",
        lambda x, i: torch.index_select(x, 2, i),
        (I((2, 3, 6)), I((6,), "index:6", **IDX)),
        (),
        "dim=2",
    ),
    ("repeat", lambda x, i: torch.index_select(x, 0, i), (I((3,)), I((7,), "index:3", **IDX)), (), "dim=0"),
)
INDEX = (
    ("rows", lambda x, i: x[i], (I((6, 4)), I((3,), "index:6", **IDX)), (), "x[i]"),
    (
        "two_indices",
        lambda x, i, j: x[i, j],
        (I((5, 6)), I((4,), "index:5", **IDX), I((4,), "index:6", **IDX)),
        (),
        "x[i, j]",
    ),
)
INDEX_PUT = (
    (
        "rows",
        lambda x, v: torch.index_put(x, (torch.tensor([4, 1]),), v),
        (I((6, 3)), I((2, 3))),
        (),
        "rows [4, 1]",
    ),
    (
        "accumulate",
        lambda x, v: torch.index_put(x, (torch.tensor([0, 3, 0]),), v, accumulate=True),
        (I((5,), "index:10"), I((3,), "index:10")),
        (),
        "indices [0, 3, 0], accumulate=True, integer values",
    ),
)
MASKED_FILL = (
    (
        "rank2",
        lambda x, m: x.masked_fill(m, -1.0 if x.is_floating_point() else -1),
        (I((4, 5)), I((4, 5), "mask", dtype=BOOL)),
        (),
        "value=-1",
    ),
    (
        "broadcast_mask",
        lambda x, m: x.masked_fill(m, 0),
        (I((2, 3, 4)), I((3, 1), "mask", dtype=BOOL)),
        {"broadcast"},
        "value=0",
    ),
)
WHERE = (
    (
        "rank2",
        lambda c, a, b: torch.where(c, a, b),
        (I((4, 5), "mask", dtype=BOOL), I((4, 5)), I((4, 5))),
        (),
        "",
    ),
    (
        "broadcast",
        lambda c, a, b: torch.where(c, a, b),
        (I((4, 1), "mask", dtype=BOOL), I((1, 5)), I((4, 5))),
        {"broadcast"},
        "",
    ),
)


def _embedding(i, w):
    return nnf.embedding(i, w)


EMBEDDING = (
    ("rank1", _embedding, (I((6,), "index:10", **IDX), I((10, 4), constant=True)), (), "10 x 4 table"),
    ("rank2", _embedding, (I((2, 3), "index:8", **IDX), I((8, 16), constant=True)), (), "8 x 16 table"),
)
#: embedding_bag is not Core ATen (it exports as _embedding_bag_forward_only, which to_edge refuses): no cases.


def _lstm(input_size: int, hidden: int, layers: int = 1, batch_first: bool = True):
    def build(tensors):
        torch.manual_seed(0)
        return torch.nn.LSTM(input_size, hidden, layers, batch_first=batch_first)

    return build


def _lstm_cases(dtype: str):
    from conformance.operators.spec import Case, Input

    out = []
    for name, (batch, seq, feat, hid, layers) in {
        "one_layer": (2, 5, 4, 8, 1),
        "two_layers": (1, 3, 6, 5, 2),
        "seq1": (3, 1, 2, 4, 1),
    }.items():
        build = _lstm(feat, hid, layers)
        out.append(
            Case(
                "aten::lstm.input",
                dtype,
                name,
                (Input((batch, seq, feat), dtype),),
                _first_output(build),
                ACCUMULATE,
                frozenset(),
                feat + hid,
                f"input {feat}, hidden {hid}, {layers} layer(s), batch_first",
            )
        )
    return out


def _first_output(build: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    return lambda tensors: _Out0(build(tensors))


class _Out0(torch.nn.Module):
    """The LSTM's output sequence (the first of its results)."""

    def __init__(self, lstm) -> None:
        super().__init__()
        self.lstm = lstm

    def forward(self, x):
        return self.lstm(x)[0]


OPERATORS = (
    Operator("aten::index_select", F, ALL, listed("aten::index_select", INDEX_SELECT)),
    Operator("aten::index.Tensor", F, ALL, listed("aten::index.Tensor", INDEX)),
    Operator(
        "aten::index_put",
        F,
        FLOATS + ("int32", "int64"),
        listed("aten::index_put", INDEX_PUT),
        composite=True,
        note="functional index_put: a copy of the input (_clone_dim_order) and index_put",
    ),
    Operator(
        "aten::masked_fill.Scalar",
        F,
        FLOATS + ("int32", "int64"),
        listed("aten::masked_fill.Scalar", MASKED_FILL),
        composite=True,
        note="to_edge makes it scalar_tensor + where.self",
    ),
    Operator("aten::where.self", F, ALL, listed("aten::where.self", WHERE)),
    Operator("aten::embedding", F, FLOATS, listed("aten::embedding", EMBEDDING)),
    Operator(
        "aten::lstm.input",
        F,
        (FLOAT32,),
        _lstm_cases,
        composite=True,
        note="torch.nn.LSTM, decomposed by to_edge into matrix products and activations: all of it must "
        "be delegated; tolerance ACCUMULATE over input + hidden size",
    ),
)
