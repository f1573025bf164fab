"""What crosses the vendor-process boundary besides plain data: the suite's own
records of a lowering and a runtime load, and tensors as ``torch.save`` bytes
(which keeps every dtype and needs no shared memory).

These are the only classes a task's pickled result may hold
(``conformance.vendor.process.load_result``); both processes import them.
"""

from __future__ import annotations

import dataclasses
import io
from typing import Any


@dataclasses.dataclass(frozen=True)
class PartitionRecord:
    """What one partitioner's ``partition()`` returned during real lowering,
    captured before ExecuTorch rewrites the graph."""

    partitioner: str
    #: tag -> (backend_id, ((key, value), ...)) from the DelegationSpecs
    tags: dict[str, tuple[str, tuple[tuple[str, bytes], ...]]]
    #: (node name, operator schema name, tag) for every tagged operator node
    tagged_ops: tuple[tuple[str, str, str], ...]
    #: (node name, target, tag) for tagged call_function nodes that are not operators (operator.getitem)
    tagged_non_ops: tuple[tuple[str, str, str], ...]
    #: tags found on nodes (placeholders included)
    node_tags: frozenset[str]


@dataclasses.dataclass(frozen=True)
class Lowering:
    """One export and lowering of a sample in the vendor process."""

    pte: bytes | None
    records: tuple[PartitionRecord, ...]
    #: backend id -> 'module.qualname' of every BackendDetails subclass named so in the vendor process
    backend_classes: dict[str, tuple[str, ...]]
    #: file name -> path of the .ptd files written (named-data lowering only)
    data_files: dict[str, str]
    error: str | None = None

    @property
    def pte_bytes(self) -> bytes:
        """The .pte; only a lowering without ``error`` has one."""
        if self.pte is None:
            raise ValueError(f"the lowering made no program: {self.error}")
        return self.pte


@dataclasses.dataclass(frozen=True)
class RuntimeLoad:
    """What loading the runtime library did to the backend registry of a fresh process."""

    registered_before: tuple[str, ...]
    registered_after: tuple[str, ...]
    libraries: tuple[str, ...]
    libraries_error: str | None
    #: the named libraries that are mapped into the process after load_runtime()
    mapped: tuple[str, ...]
    error: str | None
    available: bool | None
    #: the backends registered once ``executorch.runtime`` was imported, before the descriptor's module
    #: (ExecuTorch's own Python runtime registers those whose libraries its pybindings NEED); None where
    #: that was not observed (a target's runner)
    registered_at_import: tuple[str, ...] | None = None
    #: the vendor's simulator ('module:qualname') when the backend's delegates run in it
    #: (``backend_kit.simulator``) instead of a runtime library; None for a real runtime
    simulator: str | None = None


def pack(tensors: Any) -> bytes:
    """``tensors`` (a tensor, or a list/tuple of them) as bytes."""
    import torch

    buffer = io.BytesIO()
    torch.save(tensors, buffer)
    return buffer.getvalue()


def unpack(data: bytes) -> Any:
    import torch

    return torch.load(io.BytesIO(data), weights_only=True)
