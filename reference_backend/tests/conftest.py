"""Fixtures: export once per session, load the runtime once."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest
import torch
from executorch.exir import to_edge_transform_and_lower

sys.path.insert(0, str(Path(__file__).parent))

import reference_backend  # noqa: E402
from models import cases  # noqa: E402


@functools.lru_cache(maxsize=None)
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


@pytest.fixture(scope="session")
def runtime():
    """The loaded reference runtime library."""
    return reference_backend.load_runtime()


#: The compile spec pairs that ask for blob format 1.0.
FORMAT_1_0 = (("blob_format", b"1.0"),)


@pytest.fixture(scope="session")
def exported():
    return export
