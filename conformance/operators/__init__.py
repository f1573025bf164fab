"""The operator conformance corpus (C-OPS-*): cases per Core ATen operator,
the descriptor's OperatorSupport, the vendor-process tasks and the runner."""

from conformance.operators.support import OperatorDeclaration, OperatorSupport

__all__ = ["OperatorDeclaration", "OperatorSupport"]
