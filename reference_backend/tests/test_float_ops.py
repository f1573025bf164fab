"""Blob format 1.4's float32 operators (reference_backend/float_ops.py, runtime/src/float_ops.cpp): what the
partitioner claims of them, that an older blob format keeps them on CPU, that their work counts toward the
compute bound, and that forged parameter words with a valid checksum are refused at init with one line
naming the operator and the word. Their numerics against eager PyTorch: test_numerics.py (models.py) and the
suite's operator corpus (OPS-1/OPS-2)."""

from __future__ import annotations

import functools
import math

import pytest
import torch
import torch.nn.functional as nnf
from executorch.exir import to_edge, to_edge_transform_and_lower
from executorch.runtime import Runtime
from forge import replace_blob
from forged_programs import fields_of, forge, op_named, set_param
from hostile_child import run_in_child

import reference_backend
from backend_kit.aot import schema_name
from backend_kit.header import Header, decode, encode
from reference_backend.compile_specs import blob_format_spec
from reference_backend.ops import why_unsupported
from reference_backend.pte_blobs import delegate_blobs
from reference_backend.serialize import SerializationError, serialize_program


class Shaped(torch.nn.Module):
    """x [1, 2, 6, 6] -> max_pool2d -> avg_pool2d -> permute -> clamp -> softmax -> view -> mean."""

    def forward(self, x):
        y = nnf.max_pool2d(x, 2, 2)  # [1, 2, 3, 3]
        y = nnf.avg_pool2d(y, 2, 1)  # [1, 2, 2, 2]
        y = torch.clamp(y.permute(0, 2, 3, 1), -0.5, 0.5)
        y = torch.softmax(y, dim=-1).reshape(1, 8)
        return y.mean([1], keepdim=True)


class MaxPool(torch.nn.Module):
    def forward(self, x):
        return nnf.max_pool2d(x, 2, 2)


def _lower(model, example, specs=()) -> bytes:
    edge = to_edge_transform_and_lower(
        torch.export.export(model, example), partitioner=[reference_backend.ReferencePartitioner(list(specs))]
    )
    return edge.to_executorch().buffer


@functools.cache
def shaped_pte() -> bytes:
    return _lower(Shaped(), (torch.randn(1, 2, 6, 6),))


def _run(pte: bytes, *inputs):
    return Runtime.get().load_program(pte).load_method("forward").execute(list(inputs))


def _nodes(model, example, **export):
    program = to_edge(torch.export.export(model, example, **export)).exported_program()
    return {
        schema_name(n.target): n
        for n in program.graph.nodes
        if n.op == "call_function" and schema_name(n.target)
    }


def test_the_forged_programs_start_from_one_that_runs_and_matches(runtime):
    x = torch.randn(1, 2, 6, 6)
    (out,) = _run(shaped_pte(), x)
    torch.testing.assert_close(out, Shaped()(x), rtol=1e-6, atol=1e-7)
    assert [op.name for op in fields_of(shaped_pte()).ops] == [
        "max_pool2d",
        "avg_pool2d",
        "permute",
        "clamp",
        "softmax",
        "view",
        "mean",
    ]


def test_an_older_blob_format_keeps_the_new_operators_on_cpu(runtime):
    """Asked for blob format 1.3 (a runtime of 0.3.0), the partitioner claims the operators that 1.3 holds
    and leaves sigmoid and div to ExecuTorch's CPU kernels; the program runs and matches."""

    class Mixed(torch.nn.Module):
        def forward(self, x, y):
            return torch.relu(torch.sigmoid(x + y) / y)

    x, y = torch.randn(3, 4), torch.rand(3, 4) + 0.5
    pte = _lower(Mixed(), (x, y), [blob_format_spec(1, 3)])
    blobs = delegate_blobs(pte)
    assert len(blobs) == 2  # add, then relu: sigmoid and div between them on CPU
    assert all(decode(b.data).blob_format == (1, 3) for b in blobs)
    (out,) = _run(pte, x, y)
    torch.testing.assert_close(out, Mixed()(x, y))
    nodes = _nodes(Mixed(), (x, y))
    assert why_unsupported(nodes["aten::sigmoid"], 3) == (
        "aten::sigmoid needs blob format 1.4; the partitioner writes 1.3"
    )
    assert why_unsupported(nodes["aten::sigmoid"]) is None


def test_the_serializer_refuses_to_write_them_in_format_1_3():
    class Div(torch.nn.Module):
        def forward(self, a, b):
            return a / b

    program = torch.export.export(Div(), (torch.randn(2), torch.rand(2) + 1))
    program = to_edge(program).exported_program()
    with pytest.raises(
        SerializationError, match=r"aten::div.Tensor needs blob format 1.4; format 1.3 cannot"
    ):
        serialize_program(program, 3)
    assert serialize_program(program, 4)


@pytest.mark.parametrize(
    ("make", "example", "op", "reason"),
    [
        (
            lambda x: nnf.max_pool2d(x, 2, 2, return_indices=True),
            (torch.randn(1, 1, 4, 4),),
            "aten::max_pool2d_with_indices",
            "max_pool2d's indices are used (the runtime computes the values only)",
        ),
        (
            lambda x: torch.clamp(x, math.nan, 1.0),
            (torch.randn(4),),
            "aten::clamp",
            "aten::clamp bounds must be numbers, not NaN (got nan, 1.0)",
        ),
        (
            lambda x: torch.softmax(x, 0),
            (torch.randn(()),),
            "aten::_softmax",
            "aten::_softmax of a 0-dimensional",
        ),
    ],
)
def test_what_the_runtime_cannot_run_is_not_claimed(make, example, op, reason):
    class M(torch.nn.Module):
        def forward(self, x):
            return make(x)

    assert (why_unsupported(_nodes(M(), example)[op]) or "").startswith(reason)


def test_a_view_of_a_dynamic_dimension_is_not_claimed_but_sigmoid_is():
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.sigmoid(x).reshape(-1)

    batch = torch.export.Dim("batch", min=2, max=8)
    nodes = _nodes(M(), (torch.randn(4, 3),), dynamic_shapes=({0: batch},))
    assert why_unsupported(nodes["aten::sigmoid"]) is None
    assert why_unsupported(nodes["aten::view_copy"]) == "aten::view_copy runs on static shapes only"


@pytest.mark.full  # each starts processes that export and run: the full tier (CI) runs it
def test_a_pool_counts_toward_the_compute_bound(tmp_path, runtime):
    """One max_pool2d, 2x2 stride 2 on [1, 2, 6, 6]: 18 outputs x (2 x (2 + 1) + 1 + 1) steps, + 1 for the
    op's dispatch, + 18 for the output copy (float_ops.cpp float_op_steps)."""
    path = tmp_path / "pool.pte"
    path.write_bytes(_lower(MaxPool(), (torch.randn(1, 2, 6, 6),)))
    steps = 18 * 8 + 1 + 18
    result = run_in_child(path, env={"REFERENCE_BACKEND_MAX_COMPUTE_STEPS": str(steps - 1)})
    assert result.stage == "load" and "0x:25" in (result.error or ""), result
    (line,) = result.backend_lines()
    assert (
        f"needing ~{steps} compute steps per execute (op 0, max_pool2d: 145), more than the {steps - 1}"
        in line
    )
    result = run_in_child(path, env={"REFERENCE_BACKEND_MAX_COMPUTE_STEPS": str(steps)})
    assert (result.stage, result.error) == ("done", None), result.backend_lines()


#: (op, parameter word, forged value, fragment of the refusal)
FORGERIES = {
    "max_pool_kernel_0": ("max_pool2d", 0, 0, "pooling dimension 0 has kernel 0"),
    "max_pool_pad_over_half": ("max_pool2d", 5, 2, "pooling dimension 1 has kernel 2, stride 2, padding 2"),
    "max_pool_ceil_2": ("max_pool2d", 8, 2, "ceil_mode and count_include_pad must be 0 or 1"),
    "avg_pool_stride_0": ("avg_pool2d", 2, 0, "pooling dimension 0 has kernel 2, stride 0"),
    "avg_pool_divisor_negative": ("avg_pool2d", 8, -1, "divisor_override 0 (none) to 65535"),
    "avg_pool_window_over_input": (
        "avg_pool2d",
        0,
        65535,
        "pooling window larger than the padded input (dimension 2 is 3)",
    ),
    "permute_repeats": ("permute", 1, 0, "permute word 1 is 0: not a permutation of 4 dimensions"),
    "permute_out_of_rank": ("permute", 3, 4, "permute word 3 is 4: not a permutation of 4 dimensions"),
    "softmax_dim_out_of_rank": ("softmax", 0, 4, "softmax dim 4 of a rank-4 input"),
    "softmax_dim_negative": ("softmax", 0, -1, "softmax dim -1 of a rank-4 input"),
    "view_other_count": ("view", 1, 9, "view of 8 elements as 9"),
    "view_negative": ("view", 0, -1, "view size 0 is -1"),
    "mean_mask_over_rank": ("mean", 0, 0b100, "mean dimension mask 0x04 names a dimension of a rank-2 input"),
    "mean_mask_over_8_bits": ("mean", 0, 0x100, "mean has dimension mask 256 and keepdim 1"),
    "mean_keepdim_2": ("mean", 1, 2, "mean has dimension mask 2 and keepdim 2"),
}


#: The forgeries of the default tier (one per kind of check in init); the full tier runs them all.
DEFAULT_TIER_FORGERIES = ("view_negative", "max_pool_kernel_0", "softmax_dim_out_of_rank")


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=() if n in DEFAULT_TIER_FORGERIES else pytest.mark.full) for n in FORGERIES],
)
def test_forged_parameter_words_are_refused_at_init(tmp_path, name):
    op, word, value, fragment = FORGERIES[name]
    target = op_named(fields_of(shaped_pte()), op)

    def edit(payload, fields):
        set_param(payload, fields, target, word, value)

    path = tmp_path / "forged.pte"
    path.write_bytes(forge(shaped_pte(), edit))
    result = run_in_child(path)
    assert result.stage == "load" and "0x:23" in (result.error or ""), f"accepted (got to {result.stage})"
    (line,) = result.backend_lines()
    assert f"({op})" in line and fragment in line, line


def test_a_format_1_3_blob_cannot_hold_their_opcodes(tmp_path):
    """The same payload with its header saying 1.3 (1.3's layout is 1.4's): opcode 17 is unknown there."""

    def as_1_3(raw: bytearray) -> bytes:
        h = decode(bytes(raw))
        header = Header(
            h.backend_id,
            (1, 3),
            h.backend_version,
            h.executorch_version,
            memory_limit=h.memory_limit,
            named_data_checksums=h.named_data_checksums,
        )
        return encode(header, bytes(raw[h.header_length :]))

    path = tmp_path / "as_1_3.pte"
    path.write_bytes(replace_blob(shaped_pte(), as_1_3))
    result = run_in_child(path)
    assert result.stage == "load" and result.error is not None
    lines = result.backend_lines()  # the old-blob warning, then the refusal
    assert "op 0 has unknown opcode 17 (blob format 1.3 has opcodes 1 to 12)" in lines[-1], lines
