"""The partitioner claims exactly what the runtime executes, and preprocess
is deterministic."""

from __future__ import annotations

import torch
from executorch.exir import to_edge
from models import cases
from torch.export.graph_signature import InputKind

import reference_backend
from reference_backend.ops import why_unsupported
from reference_backend.pte_blobs import delegate_blobs


def tagged_program(model, example):
    edge = to_edge(torch.export.export(model, example))
    program = edge.exported_program()
    result = reference_backend.ReferencePartitioner().partition(program)
    return result.tagged_exported_program, result.partition_tags


def test_only_supported_nodes_are_tagged():
    class Mixed(torch.nn.Module):
        def forward(self, x, n):
            y = torch.relu(x) + 1.0
            z = torch.exp(y) * y  # exp: unsupported
            return z - x, n + n  # int tensors: unsupported

    program, tags = tagged_program(Mixed(), (torch.randn(3, 4), torch.arange(4)))
    assert tags and all(spec.backend_id == "ReferenceBackend" for spec in tags.values())
    for node in program.graph.nodes:
        tag = node.meta.get("delegation_tag")
        if node.op == "call_function":
            assert (tag is not None) == (why_unsupported(node) is None), node.format_node()
            if "aten.exp" in str(node.target) or node.meta["val"].dtype != torch.float32:
                assert tag is None


def test_weights_are_owned_by_the_delegate_not_runtime_inputs():
    from executorch.exir import to_edge_transform_and_lower

    model, example = cases()["mlp"]
    lowered = to_edge_transform_and_lower(
        torch.export.export(model, example), partitioner=[reference_backend.ReferencePartitioner()]
    ).exported_program()
    kinds = [s.kind for s in lowered.graph_signature.input_specs]
    assert kinds == [InputKind.USER_INPUT]  # all four weights and biases went into the blob


def _add_with_dynamic_batch(dim):
    class Add(torch.nn.Module):
        def forward(self, x):
            return x + x

    edge = to_edge(torch.export.export(Add(), (torch.randn(4, 3),), dynamic_shapes=({0: dim},)))
    program = edge.exported_program()
    result = reference_backend.ReferencePartitioner().partition(program)
    (add,) = [n for n in result.tagged_exported_program.graph.nodes if n.op == "call_function"]
    return add, result.partition_tags


def test_a_bounded_dynamic_dimension_is_delegated():
    """Blob format 1.3 stores a dimension bounded above (Dim(..., max=...)) as its
    bound and a dynamic mask; the runtime resizes the outputs at each call."""
    add, tags = _add_with_dynamic_batch(torch.export.Dim("batch", min=2, max=8))
    assert why_unsupported(add) is None
    assert add.meta["delegation_tag"] in tags and next(iter(tags.values())).backend_id == "ReferenceBackend"


def test_an_unbounded_dynamic_dimension_stays_on_cpu():
    """Without a max the runtime has no size to check an input against: not claimed."""
    add, tags = _add_with_dynamic_batch(torch.export.Dim("batch"))
    assert tags == {} and "delegation_tag" not in add.meta
    assert why_unsupported(add) == "result is not a float32 tensor with static or bounded shape"


def test_preprocess_is_deterministic(exported):
    from exports import export

    first = delegate_blobs(exported("partially_delegated"))
    export.cache_clear()
    second = delegate_blobs(export("partially_delegated"))
    assert [b.data for b in first] == [b.data for b in second]


def test_backend_id_is_the_backend_details_class_name(exported):
    ids = {b.backend_id for b in delegate_blobs(exported("mlp"))}
    assert ids == {reference_backend.ReferenceBackend.__name__} == {"ReferenceBackend"}
