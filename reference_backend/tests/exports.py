"""Exports the test models once per process (cached)."""

from __future__ import annotations

import functools

import torch
from executorch.exir import to_edge_transform_and_lower
from models import cases

import reference_backend

#: The compile spec pairs that ask for blob format 1.0.
FORMAT_1_0 = (("blob_format", b"1.0"),)


@functools.cache
def export(name: str, compile_specs: tuple[tuple[str, bytes], ...] = ()) -> bytes:
    """The .pte bytes of model ``name`` lowered to the reference backend,
    with compile specs given as (key, value) pairs (hashable, for the cache)."""
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    model, example = cases()[name]
    specs = [CompileSpec(key, value) for key, value in compile_specs]
    edge = to_edge_transform_and_lower(
        torch.export.export(model, example),
        partitioner=[reference_backend.ReferencePartitioner(specs)],
    )
    return edge.to_executorch().buffer
