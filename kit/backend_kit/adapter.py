"""A conformance adapter for a backend that already has a payload format of
its own: the AOT half (docs/out-of-tree-guide.md, "Adopting the contract").

The adapter is a backend of its own, with an id of its own, that composes the
existing one and changes nothing of what it computes:

- :class:`AdapterPartitioner` runs the existing backend's partitioner and hands
  what it claims to the adapter's id, with the same compile specs;
- :func:`preprocess_wrapped` runs the existing backend's ``preprocess`` and puts
  the contract header in front of its blob; its named data (weights kept out of
  the blob) and debug handles pass through untouched.

The adapter's ``BackendDetails`` subclass is the vendor's, because ExecuTorch
finds a backend by the class's ``__name__`` and, since 1.1, refuses a subclass
of a ``BackendDetails`` subclass: the adapter composes the existing class, it
cannot inherit from it::

    class MyAdapterBackend(BackendDetails):
        @staticmethod
        def preprocess(edge_program, compile_specs):
            return preprocess_wrapped(ExistingBackend, WRITER, edge_program, compile_specs)

The runtime half is ``include/backend_kit/adapter.h``. Importing this module
imports executorch.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult

from backend_kit.aot import BlobWriter


class AdapterPartitioner(Partitioner):
    """Partitions like ``inner`` and delegates what ``inner`` gives ``wrapped_id``
    to ``backend_id`` instead, keeping each partition's compile specs.

    Tags ``inner`` gives other backends are left as they are. What not to
    decompose and the pre-decomposition transform are ``inner``'s.
    """

    def __init__(self, inner: Partitioner, wrapped_id: str, backend_id: str) -> None:
        super().__init__(inner.spec)
        self.inner = inner
        self.wrapped_id = wrapped_id
        self.backend_id = backend_id

    def partition(self, exported_program: Any) -> PartitionResult:
        result = self.inner.partition(exported_program)
        tags = {
            tag: DelegationSpec(self.backend_id, list(spec.compile_specs))
            if spec.backend_id == self.wrapped_id
            else spec
            for tag, spec in result.partition_tags.items()
        }
        return PartitionResult(tagged_exported_program=result.tagged_exported_program, partition_tags=tags)

    def ops_to_not_decompose(self, ep: Any) -> Any:
        return self.inner.ops_to_not_decompose(ep)

    def transform_for_pre_decomposition(self, exported_program: Any) -> Any:
        return self.inner.transform_for_pre_decomposition(exported_program)


def preprocess_wrapped(
    wrapped: type[BackendDetails], writer: BlobWriter, edge_program: Any, compile_specs: list
) -> PreprocessResult:
    """``wrapped.preprocess(edge_program, compile_specs)`` with the contract header
    (``writer``) in front of its blob. The rest of the result (named data,
    debug handles) is ``wrapped``'s, unchanged."""
    result = wrapped.preprocess(edge_program, compile_specs)
    return dataclasses.replace(result, processed_bytes=writer.blob(result.processed_bytes))
