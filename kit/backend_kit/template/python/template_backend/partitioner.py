"""Which nodes the backend takes: every float32 operator of ``OPS``, each one a
delegate of its own (the payload holds one operator)."""

from __future__ import annotations

import torch
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from backend_kit.aot import schema_name
from template_backend.ops import OPS
from template_backend.version import BACKEND_ID


class _Supported(OperatorSupportBase):
    def is_node_supported(self, submodules, node) -> bool:
        val = node.meta.get("val")
        return (
            node.op == "call_function"
            and schema_name(node.target) in OPS
            and isinstance(val, torch.Tensor)
            and val.dtype == torch.float32
        )


class TemplateBackendPartitioner(Partitioner):
    """Tags each supported node as a partition of its own."""

    def partition(self, exported_program) -> PartitionResult:
        tags = {}
        proposed = CapabilityBasedPartitioner(
            exported_program.graph_module, _Supported(), allows_single_node_partition=True
        ).propose_partitions()
        for partition in proposed:
            for node in partition.nodes:
                tag = f"{BACKEND_ID}_{node.name}"
                node.meta["delegation_tag"] = tag
                tags[tag] = DelegationSpec(BACKEND_ID, [])
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)
