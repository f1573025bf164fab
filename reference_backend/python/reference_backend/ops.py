"""The operators the reference runtime executes: one table for the
partitioner (what to claim) and the serializer (how to encode it)."""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

#: Most dimensions a tensor may have (kMaxRank in graph.h).
MAX_RANK = 8


@dataclasses.dataclass(frozen=True)
class OpSpec:
    """One supported operator: its opcode in the blob and its tensor inputs."""

    opcode: int
    min_inputs: int
    max_inputs: int
    has_alpha: bool = False


#: Keyed by the operator's schema name, the same for ATen and edge overloads.
SUPPORTED_OPS: dict[str, OpSpec] = {
    "aten::add.Tensor": OpSpec(opcode=1, min_inputs=2, max_inputs=2, has_alpha=True),
    "aten::sub.Tensor": OpSpec(opcode=2, min_inputs=2, max_inputs=2, has_alpha=True),
    "aten::mul.Tensor": OpSpec(opcode=3, min_inputs=2, max_inputs=2),
    "aten::relu": OpSpec(opcode=4, min_inputs=1, max_inputs=1),
    "aten::linear": OpSpec(opcode=5, min_inputs=2, max_inputs=3),
}

#: Operators kept whole during lowering so that the backend sees them.
OPS_TO_KEEP = [torch.ops.aten.linear.default]


def op_name(target: Any) -> str | None:
    """Schema name of a call_function target ("aten::add.Tensor"), or None."""
    name = getattr(target, "name", None)
    return name() if callable(name) else None


def tensor_inputs(node: torch.fx.Node) -> list[Any]:
    """The positional tensor operands of ``node`` (alpha is a kwarg)."""
    spec = SUPPORTED_OPS[op_name(node.target)]
    return [a for a in node.args[: spec.max_inputs] if a is not None]


def static_float32_shape(value: Any) -> tuple[int, ...] | None:
    """The shape of a float32 fake tensor with concrete sizes in the default dim order, else None (the
    runtime reads every tensor as contiguous: a channels-last operand would be read wrongly)."""
    if not isinstance(value, torch.Tensor) or value.dtype != torch.float32:
        return None
    if not value.is_contiguous():
        return None
    shape = []
    for dim in value.shape:
        if not isinstance(dim, int) or not 0 <= dim < 2**32:
            return None
        shape.append(dim)
    return tuple(shape) if len(shape) <= MAX_RANK else None


def why_unsupported(node: torch.fx.Node) -> str | None:
    """None if the runtime can execute ``node``, else the reason it cannot."""
    if node.op != "call_function":
        return "not an operator call"
    name = op_name(node.target)
    spec = SUPPORTED_OPS.get(name)
    if spec is None:
        return f"operator {name or node.target} is not supported"
    if static_float32_shape(node.meta.get("val")) is None:
        return "result is not a float32 tensor with static shape"
    operands = tensor_inputs(node)
    if not spec.min_inputs <= len(operands) <= spec.max_inputs:
        return f"takes {len(operands)} tensor operands"
    for arg in operands:
        if not isinstance(arg, torch.fx.Node):
            return f"operand {arg!r} is a Python scalar, not a tensor"
        if static_float32_shape(arg.meta.get("val")) is None:
            return f"operand {arg.name} is not a float32 tensor with static shape"
    extra = set(node.kwargs) - ({"alpha"} if spec.has_alpha else set())
    if extra:
        return f"unsupported keyword arguments {sorted(extra)}"
    if spec.has_alpha and not isinstance(node.kwargs.get("alpha", 1), (int, float)):
        return "alpha is not a number"
    if name == "aten::linear":
        weight = operands[1].meta["val"]
        if weight.dim() != 2 or (len(operands) == 3 and operands[2].meta["val"].dim() != 1):
            return "linear weight must be 2-D and bias 1-D"
    return None
