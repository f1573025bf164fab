"""A minimal vendor backend built on the contract kit: float32 aten::neg.

Everything generic (the blob header, the runtime loader, the CMake build) is
the kit's; what remains is the vendor's own: which nodes to claim, the
payload, and the kernel (runtime/backend.cpp).
"""

from __future__ import annotations

import struct
from pathlib import Path

import torch
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from executorch.version import __version__ as executorch_version
from packaging.version import Version
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from backend_kit import runtime
from backend_kit.header import Header, encode

BACKEND_ID = "ExampleNegBackend"
__version__ = "0.1.0"
BLOB_FORMAT = (1, 0)
LIBRARY = "libexample_vendor_runtime.so"


def _triple(text: str) -> tuple[int, int, int]:
    r = Version(text).release + (0, 0)
    return r[0], r[1], r[2]


class ExampleNegBackend(BackendDetails):
    """Payload, blob format 1.0: u64 number of float32 elements."""

    @staticmethod
    def preprocess(edge_program, compile_specs) -> PreprocessResult:
        (node,) = [n for n in edge_program.graph.nodes if n.op == "call_function"]
        payload = struct.pack("<Q", node.meta["val"].numel())
        header = Header(BACKEND_ID, BLOB_FORMAT, _triple(__version__), _triple(executorch_version))
        return PreprocessResult(processed_bytes=encode(header, payload))


class _NegSupport(OperatorSupportBase):
    def is_node_supported(self, submodules, node) -> bool:
        name = getattr(node.target, "name", None)  # edge and aten overloads: "aten::neg"
        if node.op != "call_function" or not callable(name) or name() != "aten::neg":
            return False
        val = node.meta.get("val")
        return isinstance(val, torch.Tensor) and val.dtype == torch.float32


class ExampleNegPartitioner(Partitioner):
    """Claims each float32 neg as a partition of its own."""

    def partition(self, exported_program) -> PartitionResult:
        tags = {}
        proposed = CapabilityBasedPartitioner(
            exported_program.graph_module, _NegSupport(), allows_single_node_partition=True
        ).propose_partitions()
        for partition in proposed:
            for node in partition.nodes:
                # one op per blob, as preprocess expects
                tag = f"neg_{node.name}"
                node.meta["delegation_tag"] = tag
                tags[tag] = DelegationSpec(BACKEND_ID, [])
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)


def load_runtime(library: str | Path):
    """Loads the built runtime library (checked against this executorch by the kit)."""
    return runtime.load_runtime(library, BACKEND_ID, distribution="example-vendor")
