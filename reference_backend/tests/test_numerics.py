"""Delegated programs give eager PyTorch's results through the standard runtime."""

from __future__ import annotations

import pytest
import torch
from executorch.runtime import Runtime
from models import cases

from backend_kit.header import MAGIC
from reference_backend.pte_blobs import delegate_blobs

NAMES = list(cases())


@pytest.mark.parametrize("name", NAMES)
def test_matches_eager(runtime, exported, name):
    model, example = cases()[name]
    method = Runtime.get().load_program(exported(name)).load_method("forward")
    actual = method.execute(list(example))
    with torch.no_grad():
        expected = model(*example)
    expected = list(expected) if isinstance(expected, tuple) else [expected]
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_program_is_delegated_to_reference_backend(exported, name):
    blobs = delegate_blobs(exported(name))
    assert blobs and {b.backend_id for b in blobs} == {"ReferenceBackend"}
    assert all(b.data.startswith(MAGIC) for b in blobs)


def test_partially_delegated_program_keeps_unsupported_ops_on_cpu(runtime, exported):
    from executorch.exir import to_edge_transform_and_lower

    import reference_backend

    model, example = cases()["partially_delegated"]
    edge = to_edge_transform_and_lower(
        torch.export.export(model, example), partitioner=[reference_backend.ReferencePartitioner()]
    )
    gm = edge.exported_program().graph_module
    called = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert sum("executorch_call_delegate" in t for t in called) == 2  # around exp
    assert any("aten.exp" in t for t in called) and any("log_softmax" in t for t in called)
    assert len(delegate_blobs(exported("partially_delegated"))) == 2


@pytest.mark.parametrize("name", ["pooled_cnn", "activations"])
def test_format_1_4_models_are_delegated_whole(exported, name):
    """Every operator of these models is one of format 1.4's: nothing is left on CPU."""
    from executorch.exir import to_edge_transform_and_lower

    import reference_backend

    model, example = cases()[name]
    edge = to_edge_transform_and_lower(
        torch.export.export(model, example), partitioner=[reference_backend.ReferencePartitioner()]
    )
    called = [str(n.target) for n in edge.exported_program().graph.nodes if n.op == "call_function"]
    assert called and all("executorch_call_delegate" in t or "getitem" in t for t in called), called


def test_repeated_execution_gives_same_results(runtime, exported):
    model, example = cases()["elementwise_chain"]
    method = Runtime.get().load_program(exported("elementwise_chain")).load_method("forward")
    first = method.execute(list(example))[0].clone()
    for _ in range(5):
        other = (torch.randn(4, 8), torch.randn(4, 8))
        torch.testing.assert_close(
            method.execute(list(other))[0], model(*other).detach(), rtol=1e-5, atol=1e-5
        )
    torch.testing.assert_close(method.execute(list(example))[0], first)
