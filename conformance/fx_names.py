"""How the suite names the operators of an FX graph, in every task that reports where operators ran.

``operator_name`` is the kit's ``schema_name`` ("aten::add.Tensor"), the one rule the kit, the suite, the
reference backend and the backend template share; a call_function target that is no operator overload
(a Python function a program calls) is named by its Python name instead, so that a report never drops it.
``operator_nodes`` are the call_function nodes of a graph but tuple indexing (``operator.getitem``),
which only unpacks another node's outputs.
"""

from __future__ import annotations

import operator
from typing import Any

from backend_kit.aot import schema_name


def operator_name(target: Any) -> str:
    """The schema name of ``target``, else its Python name."""
    return schema_name(target) or str(getattr(target, "__name__", target))


def operator_nodes(graph: Any) -> list[Any]:
    """The call_function nodes of ``graph`` other than tuple indexing, in graph order."""
    return [n for n in graph.nodes if n.op == "call_function" and n.target is not operator.getitem]
