"""Which nodes the backend takes: every float32 operator of ``OPS``, each one a
delegate of its own (the payload holds one operator)."""

from __future__ import annotations

from backend_kit.partitioner import OperatorPartitioner
from template_backend.ops import OPS
from template_backend.version import BACKEND_ID


class TemplateBackendPartitioner(OperatorPartitioner):
    """Tags each supported node as a partition of its own."""

    def __init__(self) -> None:
        super().__init__(BACKEND_ID, OPS, one_per_node=True)
