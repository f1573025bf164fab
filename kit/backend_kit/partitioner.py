"""A partitioner that claims operators by name: what most backends' first partitioner is.

``OperatorPartitioner(backend_id, ops)`` tags every ``call_function`` node whose operator's schema name
(``backend_kit.aot.schema_name``: ``"aten::add.Tensor"``) is in ``ops`` and whose output is a tensor of one
of ``dtypes``; each connected group of such nodes is one delegate, or with ``one_per_node`` each node one
of its own (a payload of one operator). A subclass narrows what it claims by overriding ``supports(node)``.
Importing this module imports executorch and torch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from backend_kit.aot import schema_name


class _Supports(OperatorSupportBase):
    def __init__(self, owner: OperatorPartitioner) -> None:
        self.owner = owner

    def is_node_supported(self, submodules: Any, node: torch.fx.Node) -> bool:
        return node.op == "call_function" and self.owner.supports(node)


class OperatorPartitioner(Partitioner):
    """Claims the nodes of the operators ``ops`` whose outputs are tensors of ``dtypes`` (float32 unless
    given), for ``backend_id`` with ``compile_specs``."""

    def __init__(
        self,
        backend_id: str,
        ops: Iterable[str],
        *,
        dtypes: Sequence[torch.dtype] = (torch.float32,),
        one_per_node: bool = False,
        compile_specs: Sequence[CompileSpec] = (),
    ) -> None:
        super().__init__()
        self.backend_id = backend_id
        self.ops = frozenset(ops)
        self.dtypes = tuple(dtypes)
        self.one_per_node = one_per_node
        self.delegation_spec = DelegationSpec(backend_id, list(compile_specs))

    def supports(self, node: torch.fx.Node) -> bool:
        """Whether the node is one to claim: its operator is one of ``ops``, its output a tensor of ``dtypes``."""
        value = node.meta.get("val")
        return (
            schema_name(node.target) in self.ops
            and isinstance(value, torch.Tensor)
            and value.dtype in self.dtypes
        )

    def partition(self, exported_program: Any) -> PartitionResult:
        tags: dict[str, DelegationSpec] = {}
        proposed = CapabilityBasedPartitioner(
            exported_program.graph_module, _Supports(self), allows_single_node_partition=True
        ).propose_partitions()
        for partition in proposed:
            for node in partition.nodes:
                tag = f"{self.backend_id}_{node.name if self.one_per_node else partition.id}"
                node.meta["delegation_tag"] = tag
                tags[tag] = self.delegation_spec
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)
