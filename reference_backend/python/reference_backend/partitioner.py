"""The partitioner: claims the subgraphs the reference runtime can execute.

Only nodes for which ``ops.why_unsupported`` returns None are claimed; all
else stays on ExecuTorch's CPU kernels. Constants used only inside one
partition (weights, biases, lifted scalars) are claimed with it, so they are
serialized into the blob instead of being passed in at run time.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from reference_backend.backend import ReferenceBackend
from reference_backend.compile_specs import requested_blob_format
from reference_backend.ops import OPS_TO_KEEP, why_unsupported
from reference_backend.version import BLOB_FORMAT

TAG_PREFIX = "reference_backend_"


class ReferenceOperatorSupport(OperatorSupportBase):
    """Yes for exactly the nodes the runtime executes, in blobs of format 1.``blob_minor`` (default: the
    newest): a program exported for an older runtime keeps the newer operators on CPU."""

    def __init__(self, blob_minor: int = BLOB_FORMAT[1]) -> None:
        super().__init__()
        self.blob_minor = blob_minor

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return why_unsupported(node, self.blob_minor) is None


def _keep_node(node: torch.fx.Node) -> bool:
    return why_unsupported(node) is None


class ReferencePartitioner(Partitioner):
    """Partitioner for ``ReferenceBackend``.

    ``compile_specs`` are stored in the .pte with each delegate; see
    ``reference_backend.compile_specs`` for the keys.
    """

    #: The backend id written into DelegationSpec (a vendor's copy renames it).
    backend_id = ReferenceBackend.__name__

    def __init__(self, compile_specs: list[CompileSpec] | None = None) -> None:
        super().__init__()
        self.compile_specs = list(compile_specs or [])
        self.blob_format = requested_blob_format(self.compile_specs)  # fails early on a bad spec
        self.delegation_spec = DelegationSpec(self.backend_id, self.compile_specs)

    def operator_support(self) -> OperatorSupportBase:
        """Which nodes to claim; override to claim a different set."""
        return ReferenceOperatorSupport(self.blob_format[1])

    def ops_to_not_decompose(
        self, ep: ExportedProgram
    ) -> tuple[list[torch._ops.OpOverload], Callable[[torch.fx.Node], bool] | None]:
        # Keep aten.linear whole only where it will be claimed; elsewhere it
        # decomposes as usual for ExecuTorch's kernels.
        return list(OPS_TO_KEEP), _keep_node

    def partition(self, exported_program: ExportedProgram) -> PartitionResult:
        graph_module = exported_program.graph_module
        partitions = CapabilityBasedPartitioner(
            graph_module, self.operator_support(), allows_single_node_partition=True
        ).propose_partitions()
        tags: dict[str, DelegationSpec] = {}
        for partition in partitions:
            tag = f"{TAG_PREFIX}{partition.id}"
            for node in partition.nodes:
                node.meta["delegation_tag"] = tag
            tags[tag] = self.delegation_spec
        _tag_owned_constants(exported_program)
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)


def _tag_owned_constants(program: ExportedProgram) -> None:
    """Tags each constant placeholder whose users all carry one same tag."""
    signature = program.graph_signature
    mutated = set(signature.buffers_to_mutate.values())
    constant_names = {
        spec.arg.name
        for spec in signature.input_specs
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)
        and spec.target not in mutated
    }
    for node in program.graph.nodes:
        if node.op != "placeholder" or node.name not in constant_names or not node.users:
            continue
        user_tags = {user.meta.get("delegation_tag") for user in node.users}
        if len(user_tags) == 1 and None not in user_tags:
            node.meta["delegation_tag"] = user_tags.pop()
