"""The float32 operators of blob format 1.4 (div, sigmoid, tanh, clamp/hardtanh, max_pool2d, avg_pool2d,
softmax, mean, permute, view): what the runtime cannot run of each (``constraint``) and the parameter words
their op records carry (``param_words``, layout in docs/blob-header.md, "Parameters of format 1.4").

Arguments are read by position with the schema's defaults for those the edge program leaves out
(``max_pool2d_with_indices(x, [2, 2], [2, 2])`` has no padding, dilation or ceil_mode)."""

from __future__ import annotations

import math
import operator
import struct
from typing import Any

import torch

#: Schema names of the operators this module describes (their opcodes are in ops.SUPPORTED_OPS).
ELEMENTWISE = ("aten::div.Tensor", "aten::sigmoid", "aten::tanh", "aten::clamp", "aten::hardtanh")
POOLS = ("aten::max_pool2d_with_indices", "aten::avg_pool2d")
SHAPED = ("aten::_softmax", "aten::mean.dim", "aten::permute_copy", "aten::view_copy")
OPERATORS = ELEMENTWISE + POOLS + SHAPED

#: Largest pooling geometry word the runtime accepts (graph.cpp checks the same bound).
MAX_GEOMETRY = 65535


def _f32_bits(value: float) -> int:
    return struct.unpack("<i", struct.pack("<f", value))[0]


def argument(node: torch.fx.Node, index: int) -> Any:
    """Positional argument ``index`` of ``node``, or its schema default when the call leaves it out."""
    if index < len(node.args):
        return node.args[index]
    schema = getattr(node.target, "_schema", None)
    if schema is None or index >= len(schema.arguments):
        return None
    name = schema.arguments[index].name
    if name in node.kwargs:
        return node.kwargs[name]
    return schema.arguments[index].default_value


def result_value(node: torch.fx.Node) -> Any:
    """The fake tensor of the result the runtime computes: max_pool2d_with_indices's values (its first
    output), else the node's own."""
    value = node.meta.get("val")
    if isinstance(value, (tuple, list)) and value:
        return value[0]
    return value


def _static(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and all(isinstance(d, int) for d in value.shape)


def _pair(value: Any, default: Any = None) -> list[int] | None:
    """A 2-D geometry argument as [h, w] (one number, or an empty list for ``default``), or None."""
    if isinstance(value, int):
        value = [value]
    if isinstance(value, (list, tuple)) and len(value) == 0 and default is not None:
        return _pair(default)
    if not isinstance(value, (list, tuple)) or len(value) not in (1, 2):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    return [int(value[0]), int(value[-1])]


def _pool_geometry(node: torch.fx.Node) -> tuple[list[int], list[int], list[int], list[int], bool] | str:
    """(kernel, stride, padding, dilation, ceil_mode) of a pooling node, or why it is not one the runtime runs."""
    is_max = node.target.name().startswith("aten::max_pool2d")
    kernel = _pair(argument(node, 1))
    stride = _pair(argument(node, 2), kernel)
    padding = _pair(argument(node, 3))
    dilation = _pair(argument(node, 4)) if is_max else [1, 1]
    ceil_mode = argument(node, 5 if is_max else 4)
    if None in (kernel, stride, padding, dilation) or not isinstance(ceil_mode, bool):
        return "pooling geometry must be static ints (kernel, stride, padding, dilation) and ceil_mode a bool"
    if (
        min(*kernel, *stride, *dilation) < 1
        or min(padding) < 0
        or max(*kernel, *stride, *dilation) > MAX_GEOMETRY
    ):
        return f"pooling geometry out of range: kernel {kernel}, stride {stride}, dilation {dilation}"
    for k, p, d in zip(kernel, padding, dilation):
        if p > ((k - 1) * d + 1) // 2:
            return f"padding {padding} is more than half the (dilated) kernel {kernel}"
    return kernel, stride, padding, dilation, ceil_mode


def _dims(dims: Any, rank: int) -> list[int] | None:
    """Dimension indices made non-negative, or None if one is out of range."""
    out = []
    for d in dims:
        if not isinstance(d, int) or not -max(rank, 1) <= d < max(rank, 1):
            return None
        out.append(d % max(rank, 1))
    return out


def _clamp_bounds(node: torch.fx.Node) -> tuple[float, float] | str:
    """(lo, hi) of clamp (None: unbounded) or hardtanh (default -1, 1), or why they are not numbers."""
    name = node.target.name()
    lo, hi = argument(node, 1), argument(node, 2)
    if name == "aten::hardtanh":
        lo = -1.0 if lo is None else lo
        hi = 1.0 if hi is None else hi
    lo = -math.inf if lo is None else lo
    hi = math.inf if hi is None else hi
    for bound in (lo, hi):
        if isinstance(bound, bool) or not isinstance(bound, (int, float)) or math.isnan(bound):
            return f"{name} bounds must be numbers, not NaN (got {lo!r}, {hi!r})"
    return float(lo), float(hi)


def constraint(node: torch.fx.Node, name: str) -> str | None:
    """Why the runtime cannot run ``node`` (operator ``name``, one of OPERATORS) beyond the dtype and operand
    checks every operator has, or None."""
    x = node.args[0].meta.get("val")
    result = result_value(node)
    if name in ("aten::clamp", "aten::hardtanh"):
        bounds = _clamp_bounds(node)
        return bounds if isinstance(bounds, str) else None
    if name in ELEMENTWISE:
        return None
    if not (_static(x) and _static(result)):
        return f"{name} runs on static shapes only"
    if name in POOLS:
        if x.dim() not in (3, 4):
            return f"{name} needs a 3-D or 4-D input, got {x.dim()}-D"
        geometry = _pool_geometry(node)
        if isinstance(geometry, str):
            return geometry
        if name == "aten::max_pool2d_with_indices":
            for user in node.users:
                if user.target is not operator.getitem or user.args[1] != 0:
                    return "max_pool2d's indices are used (the runtime computes the values only)"
        else:
            divisor = argument(node, 6)
            if divisor is not None and (not isinstance(divisor, int) or not 0 < divisor <= MAX_GEOMETRY):
                return f"divisor_override must be a positive int, got {divisor!r}"
        return None
    if x.dim() == 0 and name not in ("aten::view_copy", "aten::permute_copy"):
        return f"{name} of a 0-dimensional tensor"
    if name == "aten::_softmax":
        if argument(node, 2) is not False or _dims([argument(node, 1)], x.dim()) is None:
            return "softmax needs an int dim in range and half_to_float=False"
        return None
    if name == "aten::mean.dim":
        dims = argument(node, 1)
        if dims is not None and _dims(dims, x.dim()) is None:
            return f"mean dims {dims} out of range for a {x.dim()}-D input"
        if argument(node, 3) not in (None, torch.float32) or not isinstance(argument(node, 2), bool):
            return "mean needs keepdim a bool and dtype None or float32"
        return None
    if name == "aten::permute_copy":
        dims = _dims(argument(node, 1), x.dim())
        if dims is None or sorted(dims) != list(range(x.dim())):
            return f"permute dims {argument(node, 1)} are not a permutation of the {x.dim()} dimensions"
        return None
    return None  # view_copy: any static shape of the same element count (the export checked it)


def param_words(node: torch.fx.Node, name: str) -> list[int]:
    """The parameter words of a node that ``constraint`` accepted (docs/blob-header.md)."""
    x = node.args[0].meta["val"]
    if name in ("aten::clamp", "aten::hardtanh"):
        lo, hi = _clamp_bounds(node)
        return [_f32_bits(lo), _f32_bits(hi)]
    if name in POOLS:
        kernel, stride, padding, dilation, ceil_mode = _pool_geometry(node)
        if name == "aten::max_pool2d_with_indices":
            return [*kernel, *stride, *padding, *dilation, int(ceil_mode)]
        divisor = argument(node, 6)
        return [*kernel, *stride, *padding, int(ceil_mode), int(bool(argument(node, 5))), divisor or 0]
    if name == "aten::_softmax":
        return _dims([argument(node, 1)], x.dim())
    if name == "aten::mean.dim":
        dims = argument(node, 1)
        reduced = range(x.dim()) if not dims else _dims(dims, x.dim())
        return [sum(1 << d for d in reduced), int(argument(node, 2))]
    if name == "aten::permute_copy":
        return _dims(argument(node, 1), x.dim())
    if name == "aten::view_copy":
        return [int(d) for d in result_value(node).shape]
    return []
