"""Shape and layout operators: views, copies, concatenation, slicing.

Every result is a copy of input values: EXACT, in every dtype. In the edge
program the partitioner sees, view-like operators are their ``_copy`` forms
(aten::view_copy, aten::permute_copy, ...); transpose and reshape become
permute_copy and view_copy.
"""

from __future__ import annotations

import torch

from conformance.operators.generators import I, listed
from conformance.operators.spec import ALL, Operator

F = "shape"

VIEW = (
    ("flatten", lambda x: x.reshape(-1), (I((2, 3, 4)),), (), "reshape(-1)"),
    ("split_dim", lambda x: x.view(2, 3, 4), (I((6, 4)),), (), "view(2, 3, 4)"),
    ("to_rank0", lambda x: x.reshape(()), (I((1, 1)),), {"rank0"}, "reshape(())"),
    ("from_rank0", lambda x: x.reshape(1, 1, 1), (I(()),), {"rank0"}, "reshape(1, 1, 1)"),
    ("rank4", lambda x: x.view(4, 30), (I((2, 3, 4, 5)),), (), "view(4, 30)"),
    ("size0", lambda x: x.reshape(0, 6), (I((2, 0, 3)),), {"empty"}, "reshape(0, 6)"),
)
PERMUTE = (
    ("rank2", lambda x: x.permute(1, 0), (I((3, 5)),), (), "permute(1, 0)"),
    ("rank3", lambda x: x.permute(2, 0, 1), (I((2, 3, 4)),), (), "permute(2, 0, 1)"),
    ("rank4_nhwc", lambda x: x.permute(0, 2, 3, 1), (I((2, 3, 4, 5)),), (), "permute(0, 2, 3, 1)"),
    ("rank4_reverse", lambda x: x.permute(3, 2, 1, 0), (I((2, 3, 4, 5)),), (), "permute(3, 2, 1, 0)"),
    ("transpose", lambda x: x.transpose(0, 2), (I((2, 3, 4)),), (), "transpose(0, 2)"),
    ("size1", lambda x: x.permute(1, 0, 2), (I((1, 3, 1)),), (), "permute(1, 0, 2)"),
    ("size0", lambda x: x.permute(1, 0), (I((0, 3)),), {"empty"}, "permute(1, 0)"),
)
EXPAND = (
    ("rank2", lambda x: x.expand(4, 5), (I((1, 5)),), {"broadcast"}, "expand(4, 5)"),
    ("new_dims", lambda x: x.expand(2, 3, 5), (I((5,)),), {"broadcast"}, "expand(2, 3, 5)"),
    ("rank4", lambda x: x.expand(2, 3, 4, 5), (I((2, 1, 4, 1)),), {"broadcast"}, "expand(2, 3, 4, 5)"),
    ("rank0", lambda x: x.expand(3, 2), (I(()),), {"rank0", "broadcast"}, "expand(3, 2)"),
)
SQUEEZE = (
    ("one_dim", lambda x: x.squeeze(1), (I((3, 1, 4)),), (), "squeeze(1)"),
    ("two_dims", lambda x: x.squeeze((0, 2)), (I((1, 3, 1, 4)),), (), "squeeze((0, 2))"),
    ("to_rank0", lambda x: x.squeeze(0), (I((1,)),), {"rank0"}, "squeeze(0)"),
)
UNSQUEEZE = (
    ("front", lambda x: x.unsqueeze(0), (I((3, 4)),), (), "unsqueeze(0)"),
    ("back", lambda x: x.unsqueeze(-1), (I((2, 3, 4)),), (), "unsqueeze(-1)"),
    ("from_rank0", lambda x: x.unsqueeze(0), (I(()),), {"rank0"}, "unsqueeze(0)"),
)
SELECT = (
    ("rank2", lambda x: x[1], (I((3, 4)),), (), "select(0, 1)"),
    ("rank3_last", lambda x: x[:, :, -1], (I((2, 3, 4)),), (), "select(2, -1)"),
    ("to_rank0", lambda x: x[2], (I((5,)),), {"rank0"}, "select(0, 2)"),
)
SLICE = (
    ("rank1", lambda x: x[2:7], (I((10,)),), (), "[2:7]"),
    ("step2", lambda x: x[:, 1::2], (I((3, 9)),), (), "[:, 1::2]"),
    ("rank4_last", lambda x: x[..., :3], (I((2, 3, 4, 5)),), (), "[..., :3]"),
    ("negative", lambda x: x[-3:-1], (I((6, 2)),), (), "[-3:-1]"),
    ("to_size0", lambda x: x[3:3], (I((5, 2)),), {"empty"}, "[3:3]"),
)
SPLIT = (
    ("equal", lambda x: torch.split(x, 2, 1), (I((3, 6)),), (), "split(2, dim=1)"),
    ("sizes", lambda x: torch.split(x, [1, 3, 2], 0), (I((6, 4)),), (), "split([1, 3, 2], dim=0)"),
    ("rank4", lambda x: torch.split(x, 2, 1), (I((2, 4, 3, 3)),), (), "split(2, dim=1)"),
)
CAT = (
    ("rank1", lambda a, b: torch.cat([a, b]), (I((3,)), I((5,))), (), "dim=0"),
    ("rank2_dim1", lambda a, b: torch.cat([a, b], 1), (I((4, 2)), I((4, 3))), (), "dim=1"),
    (
        "three",
        lambda a, b, c: torch.cat([a, b, c], 0),
        (I((1, 3)), I((2, 3)), I((3, 3))),
        (),
        "dim=0, 3 inputs",
    ),
    ("rank4_channels", lambda a, b: torch.cat([a, b], 1), (I((2, 3, 4, 5)), I((2, 1, 4, 5))), (), "dim=1"),
    ("with_size0", lambda a, b: torch.cat([a, b], 0), (I((0, 3)), I((2, 3))), {"empty"}, "dim=0"),
)
STACK = (
    ("rank1", lambda a, b: torch.stack([a, b]), (I((4,)), I((4,))), (), "dim=0"),
    (
        "rank3_last",
        lambda a, b, c: torch.stack([a, b, c], -1),
        (I((2, 3, 4)), I((2, 3, 4)), I((2, 3, 4))),
        (),
        "dim=-1",
    ),
)

OPERATORS = (
    Operator("aten::view_copy", F, ALL, listed("aten::view_copy", VIEW), note="view and reshape"),
    Operator(
        "aten::permute_copy", F, ALL, listed("aten::permute_copy", PERMUTE), note="permute and transpose"
    ),
    Operator("aten::expand_copy", F, ALL, listed("aten::expand_copy", EXPAND)),
    Operator("aten::squeeze_copy.dims", F, ALL, listed("aten::squeeze_copy.dims", SQUEEZE)),
    Operator("aten::unsqueeze_copy", F, ALL, listed("aten::unsqueeze_copy", UNSQUEEZE)),
    Operator("aten::select_copy.int", F, ALL, listed("aten::select_copy.int", SELECT)),
    Operator("aten::slice_copy.Tensor", F, ALL, listed("aten::slice_copy.Tensor", SLICE)),
    Operator("aten::split_with_sizes_copy", F, ALL, listed("aten::split_with_sizes_copy", SPLIT)),
    Operator("aten::cat", F, ALL, listed("aten::cat", CAT)),
    Operator(
        "aten::stack",
        F,
        ALL,
        listed("aten::stack", STACK),
        composite=True,
        note="to_edge turns stack into unsqueeze_copy + cat: all of it must be delegated",
    ),
)
