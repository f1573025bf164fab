"""The operators the reference runtime executes: one table for the
partitioner (what to claim) and the serializer (how to encode it)."""

from __future__ import annotations

import dataclasses
import operator
from typing import Any

import torch

from backend_kit.aot import schema_name
from reference_backend import float_ops
from reference_backend.version import BLOB_FORMAT, FLOAT_OPS_MINOR, QUANT_MINOR

#: Most dimensions a tensor may have (kMaxRank in graph.h).
MAX_RANK = 8

#: Blob dtype codes (the values of ExecuTorch's ScalarType).
DTYPE_CODES = {torch.float32: 6, torch.int8: 1, torch.int32: 3}


@dataclasses.dataclass(frozen=True)
class OpSpec:
    """One supported operator: its opcode in the blob (None: folded away by
    ``reference_backend.passes`` before serialization) and its tensor inputs."""

    opcode: int | None
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
    # Blob format 1.3:
    "aten::convolution": OpSpec(opcode=6, min_inputs=2, max_inputs=3),
    "quantized_decomposed::quantize_per_tensor": OpSpec(opcode=7, min_inputs=1, max_inputs=1),
    "quantized_decomposed::dequantize_per_tensor": OpSpec(opcode=8, min_inputs=1, max_inputs=1),
    "quantized_decomposed::dequantize_per_channel": OpSpec(opcode=None, min_inputs=1, max_inputs=1),
    # Blob format 1.4 (reference_backend.float_ops: constraints and parameter words):
    "aten::div.Tensor": OpSpec(opcode=13, min_inputs=2, max_inputs=2),
    "aten::sigmoid": OpSpec(opcode=14, min_inputs=1, max_inputs=1),
    "aten::tanh": OpSpec(opcode=15, min_inputs=1, max_inputs=1),
    "aten::clamp": OpSpec(opcode=16, min_inputs=1, max_inputs=1),
    "aten::hardtanh": OpSpec(opcode=16, min_inputs=1, max_inputs=1),
    "aten::max_pool2d_with_indices": OpSpec(opcode=17, min_inputs=1, max_inputs=1),
    "aten::avg_pool2d": OpSpec(opcode=18, min_inputs=1, max_inputs=1),
    "aten::_softmax": OpSpec(opcode=19, min_inputs=1, max_inputs=1),
    "aten::mean.dim": OpSpec(opcode=20, min_inputs=1, max_inputs=1),
    "aten::permute_copy": OpSpec(opcode=21, min_inputs=1, max_inputs=1),
    "aten::view_copy": OpSpec(opcode=22, min_inputs=1, max_inputs=1),
}

#: Highest opcode of blob formats 1.0 to 1.2, and of 1.3; the operators above each need the next minor.
MAX_OPCODE_V0 = 5
MAX_OPCODE_V3 = 12


def minor_needed(opcode: int) -> int:
    """The oldest blob format minor that stores ``opcode``."""
    return FLOAT_OPS_MINOR if opcode > MAX_OPCODE_V3 else QUANT_MINOR if opcode > MAX_OPCODE_V0 else 0


#: What the graph pass folds into (reference_backend.quantized_ops): opcode, tensor operands.
BACKEND_OPS: dict[str, OpSpec] = {
    "reference_backend::quantize": OpSpec(opcode=7, min_inputs=1, max_inputs=1),
    "reference_backend::dequantize": OpSpec(opcode=8, min_inputs=1, max_inputs=1),
    "reference_backend::qlinear": OpSpec(opcode=9, min_inputs=2, max_inputs=2),
    "reference_backend::qconv2d": OpSpec(opcode=10, min_inputs=2, max_inputs=2),
    "reference_backend::qadd": OpSpec(opcode=11, min_inputs=2, max_inputs=2),
    "reference_backend::qrelu": OpSpec(opcode=12, min_inputs=1, max_inputs=1),
}

#: Operators kept whole during lowering so that the backend sees them.
OPS_TO_KEEP = [torch.ops.aten.linear.default]

_QUANTIZE, _DEQUANTIZE, _DEQUANTIZE_PER_CHANNEL = (
    "quantized_decomposed::quantize_per_tensor",
    "quantized_decomposed::dequantize_per_tensor",
    "quantized_decomposed::dequantize_per_channel",
)


def tensor_inputs(node: torch.fx.Node) -> list[Any]:
    """The positional tensor operands of ``node`` (alpha is a kwarg)."""
    spec = SUPPORTED_OPS.get(schema_name(node.target)) or BACKEND_OPS[schema_name(node.target)]
    return [a for a in node.args[: spec.max_inputs] if a is not None]


def dim_bound(dim: Any) -> tuple[int, bool] | None:
    """(size, False) for a concrete dimension, (upper bound, True) for a symbolic
    one with a finite bound (torch.export.Dim(..., max=...)), else None."""
    if isinstance(dim, int):
        return (dim, False) if 0 <= dim < 2**32 else None
    if isinstance(dim, torch.SymInt):
        node = dim.node
        try:
            upper = node.shape_env.bound_sympy(node.expr).upper
            bound = int(upper)
        except (AttributeError, TypeError, ValueError, OverflowError):
            return None
        return (bound, True) if 0 < bound < 2**32 else None
    return None


def value_layout(value: Any) -> tuple[int, tuple[int, ...], int] | None:
    """(dtype code, dims (upper bounds for dynamic ones), dynamic-dimension mask)
    of a float32 / int8 / int32 fake tensor of at most MAX_RANK dims, else None."""
    if not isinstance(value, torch.Tensor) or value.dtype not in DTYPE_CODES or value.dim() > MAX_RANK:
        return None
    # The runtime reads every tensor as contiguous: a channels-last (or otherwise permuted) operand
    # of static shape would be read wrongly, so it stays on CPU.
    if all(isinstance(size, int) for size in value.shape) and not value.is_contiguous():
        return None
    dims, mask = [], 0
    for d, size in enumerate(value.shape):
        bound = dim_bound(size)
        if bound is None:
            return None
        dims.append(bound[0])
        mask |= int(bound[1]) << d
    return DTYPE_CODES[value.dtype], tuple(dims), mask


def static_float32_shape(value: Any) -> tuple[int, ...] | None:
    """The shape of a float32 fake tensor with concrete sizes in the default dim order, else None (the
    runtime reads every tensor as contiguous: a channels-last operand would be read wrongly)."""
    layout = value_layout(value)
    if layout is None or layout[0] != DTYPE_CODES[torch.float32] or layout[2]:
        return None
    return layout[1]


def _float32(value: Any) -> bool:
    layout = value_layout(value)
    return layout is not None and layout[0] == DTYPE_CODES[torch.float32]


def _int8_per_tensor(node: torch.fx.Node) -> str | None:
    """Why a quantize/dequantize_per_tensor node is not an int8 one the runtime runs."""
    args = node.args
    if len(args) < 6 or not all(isinstance(a, (int, float)) for a in args[1:5]):
        return "scale and zero point must be numbers (the .default overload)"
    scale, zero_point, qmin, qmax, dtype = args[1:6]
    if dtype != torch.int8:
        return "only int8 quantization is supported"
    if not (scale > 0 and -128 <= zero_point <= 127 and -128 <= qmin <= qmax <= 127):
        return "scale must be positive and zero point, qmin, qmax int8"
    return None


def _folded_weight(node: torch.fx.Node) -> str | None:
    """Why a dequantize_per_channel node is not the weight of a pattern the pass folds."""
    source, scales, zeros = node.args[:3]
    if not all(isinstance(a, torch.fx.Node) and a.op == "placeholder" for a in (source, scales, zeros)):
        return "dequantize_per_channel of a computed tensor"
    if node.args[3] != 0 or node.args[6] != torch.int8:
        return "dequantize_per_channel must be int8 along axis 0"
    for user in node.users:
        if schema_name(user.target) not in ("aten::linear", "aten::convolution") or user.args[1] is not node:
            return "dequantize_per_channel that is not the weight of a linear or conv2d"
        x = user.args[0]
        if not (isinstance(x, torch.fx.Node) and schema_name(x.target) == _DEQUANTIZE):
            return "quantized weight with a float activation"
        after = list(user.users)
        if len(after) == 1 and schema_name(after[0].target) == "aten::relu":
            after = list(after[0].users)
        if len(after) != 1 or schema_name(after[0].target) != _QUANTIZE:
            return "quantized weight whose result is not quantized"
    return None


def why_unsupported(node: torch.fx.Node, blob_minor: int = BLOB_FORMAT[1]) -> str | None:
    """None if the runtime can execute ``node`` in a blob of format 1.``blob_minor``, else the reason it
    cannot."""
    if node.op != "call_function":
        return "not an operator call"
    if node.target is operator.getitem:
        # max_pool2d_with_indices's values: claimed with the pool, so that what reads them joins its partition.
        source, index = node.args[:2]
        if (
            isinstance(source, torch.fx.Node)
            and schema_name(source.target) == "aten::max_pool2d_with_indices"
            and index == 0
            and why_unsupported(source, blob_minor) is None
        ):
            return None
        return f"output {index} of {getattr(source, 'name', source)}, which the runtime does not compute"
    name = schema_name(node.target)
    spec = SUPPORTED_OPS.get(name)
    if spec is None:
        return f"operator {name or node.target} is not supported"
    if spec.opcode is not None and blob_minor < minor_needed(spec.opcode):
        return (
            f"{name} needs blob format 1.{minor_needed(spec.opcode)}; the partitioner writes 1.{blob_minor}"
        )
    if name in (_QUANTIZE, _DEQUANTIZE):
        return _int8_per_tensor(node)
    if name == _DEQUANTIZE_PER_CHANNEL:
        return _folded_weight(node)
    if not _float32(float_ops.result_value(node)):
        return "result is not a float32 tensor with static or bounded shape"
    operands = tensor_inputs(node)
    if not spec.min_inputs <= len(operands) <= spec.max_inputs:
        return f"takes {len(operands)} tensor operands"
    for arg in operands:
        if not isinstance(arg, torch.fx.Node):
            return f"operand {arg!r} is a Python scalar, not a tensor"
        if not _float32(arg.meta.get("val")):
            return f"operand {arg.name} is not a float32 tensor with static or bounded shape"
    extra = set(node.kwargs) - ({"alpha"} if spec.has_alpha else set())
    if extra:
        return f"unsupported keyword arguments {sorted(extra)}"
    if spec.has_alpha and not isinstance(node.kwargs.get("alpha", 1), (int, float)):
        return "alpha is not a number"
    if name == "aten::linear":
        weight = operands[1].meta["val"]
        if weight.dim() != 2 or (len(operands) == 3 and operands[2].meta["val"].dim() != 1):
            return "linear weight must be 2-D and bias 1-D"
    if name == "aten::convolution":
        stride, _padding, _dilation, transposed, output_padding, groups = node.args[3:9]
        if transposed or len(stride) != 2 or any(output_padding) or operands[1].meta["val"].dim() != 4:
            return "only 2-D convolution (not transposed) is supported"
        if not isinstance(groups, int) or groups < 1:
            return "groups must be a positive int"
        if any(d for d in operands[1].meta["val"].shape[2:] if not isinstance(d, int)):
            return "conv2d kernel size must be static"
    if name in float_ops.OPERATORS:
        return float_ops.constraint(node, name)
    return None
