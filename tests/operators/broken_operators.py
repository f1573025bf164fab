"""Backends that break the operator clauses, for ``--backend broken_operators:NAME`` (with this
directory on PYTHONPATH). Each is the reference backend with one defect."""

from __future__ import annotations

import dataclasses

import torch
from torch.fx.passes.operator_support import OperatorSupportBase

from backend_kit.aot import schema_name
from conformance.operators import OperatorSupport
from reference_backend import ops as reference_ops
from reference_backend import serialize as reference_serialize
from reference_backend.compile_specs import blob_format_spec
from reference_backend.conformance import DESCRIPTOR as REFERENCE
from reference_backend.ops import why_unsupported
from reference_backend.partitioner import ReferencePartitioner
from reference_backend.version import BLOB_FORMAT


def _with_support(support: OperatorSupportBase, name: str):
    cls = type(name, (ReferencePartitioner,), {"operator_support": lambda self: support})
    return lambda: [cls([blob_format_spec(*BLOB_FORMAT)])]


class _NoRelu(OperatorSupportBase):
    """Claims everything the reference partitioner claims except relu."""

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return why_unsupported(node) is None and schema_name(node.target) != "aten::relu"


# Declares relu (float32) but the partitioner never claims it.
NEVER_CLAIMS_DECLARED = dataclasses.replace(
    REFERENCE, make_partitioners=_with_support(_NoRelu(), "NoReluPartitioner")
)

# Declares mul for int32, which the partitioner (float32 only) does not claim.
MUL_INT32 = REFERENCE.operators | {
    "aten::mul.Tensor": dataclasses.replace(
        REFERENCE.operators["aten::mul.Tensor"], dtypes=("float32", "int32")
    )
}
INT32_NOT_CLAIMED = dataclasses.replace(REFERENCE, operators=MUL_INT32)


MUL_INT64 = REFERENCE.operators | {
    "aten::mul.Tensor": dataclasses.replace(
        REFERENCE.operators["aten::mul.Tensor"], dtypes=("float32", "int64")
    )
}


class _Int64Mul(OperatorSupportBase):
    """Also claims int64 mul, which the runtime (and its serializer) cannot execute."""

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        if why_unsupported(node) is None:
            return True
        val = node.meta.get("val")
        return (
            node.op == "call_function"
            and schema_name(node.target) == "aten::mul.Tensor"
            and isinstance(val, torch.Tensor)
            and val.dtype == torch.int64
        )


# Declares int64 mul and claims it; the backend cannot run it.
RUNTIME_LACKS_DECLARED = dataclasses.replace(
    REFERENCE,
    operators=MUL_INT64,
    make_partitioners=_with_support(_Int64Mul(), "Int64MulPartitioner"),
)


def _any_layout_value_layout(value):
    """The reference partitioner's and serializer's layout test before they required the default dim order."""
    if not isinstance(value, torch.Tensor) or value.dtype not in reference_ops.DTYPE_CODES:
        return None
    if value.dim() > reference_ops.MAX_RANK or not all(isinstance(d, int) for d in value.shape):
        return None
    return reference_ops.DTYPE_CODES[value.dtype], tuple(value.shape), 0


class _AnyLayout(OperatorSupportBase):
    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return why_unsupported(node) is None


def _claim_channels_last():
    # The reference backend as it was: claims channels-last operands, which its runtime reads as contiguous.
    reference_ops.value_layout = _any_layout_value_layout
    reference_serialize.value_layout = _any_layout_value_layout
    return _with_support(_AnyLayout(), "AnyLayoutPartitioner")()


CHANNELS_LAST_CLAIMED = dataclasses.replace(
    REFERENCE,
    make_partitioners=_claim_channels_last,
    operators=OperatorSupport.float32(
        "aten::add.Tensor", "aten::sub.Tensor", "aten::mul.Tensor", "aten::relu", "aten::linear"
    ),
)


# --------------------------------------------------------------------------- defects only a model exposes


def _drop_wide_conv_bias(node: torch.fx.Node):
    """The reference serializer's operands, but a convolution of more than 16 output channels loses its bias
    (every convolution of the operator corpus has 8 or fewer, a ViT's patch embedding has 32)."""
    operands = reference_ops.tensor_inputs(node)
    if schema_name(node.target) == "aten::convolution" and len(operands) == 3:
        weight = operands[1].meta.get("val")
        if weight is not None and weight.shape[0] > 16:
            return operands[:2]
    return operands


def _wide_conv_bias_dropped():
    reference_serialize.tensor_inputs = _drop_wide_conv_bias
    return REFERENCE.make_partitioners()


# Serializes every convolution of more than 16 output channels without its bias: the OPS corpus passes,
# a model with a wide biased convolution (the ViT's patch embedding) computes wrong results.
WIDE_CONV_BIAS_DROPPED = dataclasses.replace(REFERENCE, make_partitioners=_wide_conv_bias_dropped)


class _AllOrNothing(OperatorSupportBase):
    """Claims the graph only if it can claim every operator node of it (a whole-graph partitioner)."""

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        if why_unsupported(node) is not None:
            return False
        graph = node.graph
        return all(
            why_unsupported(n) is None
            for n in graph.nodes
            if n.op == "call_function" and schema_name(n.target) is not None
        )


class _AllOrNothingPartitioner(ReferencePartitioner):
    def operator_support(self) -> OperatorSupportBase:
        return _AllOrNothing()

    def ops_to_not_decompose(self, ep):
        return [], None  # keeping linear whole and then not claiming it would make lowering fail


# Delegates a graph only when it supports all of it: the samples without an unsupported operator are
# delegated, every standard model (each has an operator the runtime lacks) stays entirely on CPU.
ALL_OR_NOTHING = dataclasses.replace(
    REFERENCE, make_partitioners=lambda: [_AllOrNothingPartitioner([blob_format_spec(*BLOB_FORMAT)])]
)


# --------------------------------------------------------------------------- dynamic and quantized cases


class _StaticFloatOnly(OperatorSupportBase):
    """Claims what the reference partitioner claims, but only with static shapes and never a quantize or
    dequantize node: a partitioner written before dynamic shapes and quantization."""

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        val = node.meta.get("val")
        static = not isinstance(val, torch.Tensor) or all(isinstance(d, int) for d in val.shape)
        qdq = (schema_name(node.target) or "").startswith("quantized_decomposed::")
        return static and not qdq and why_unsupported(node) is None


# Declares relu (and add, sub, mul, linear) dynamic and quantize_per_tensor with quantized support, as the
# reference backend does, but claims neither a node of symbolic shape nor a quantize/dequantize node.
STATIC_FLOAT_ONLY = dataclasses.replace(
    REFERENCE, make_partitioners=_with_support(_StaticFloatOnly(), "StaticFloatOnlyPartitioner")
)


# The channels-last defect with every float32 result declared as computed in bfloat16: a declared
# precision widens the tolerance to bfloat16's, which the defect is still far outside.
CHANNELS_LAST_CLAIMED_BF16 = dataclasses.replace(
    CHANNELS_LAST_CLAIMED, operators=CHANNELS_LAST_CLAIMED.operators.computing_in("bfloat16")
)


# --------------------------------------------------------------------------- crashes in the vendor's code


def _segfault() -> None:
    """A real segmentation fault of the process (a read of address 0), as a native library's would be."""
    import ctypes

    ctypes.string_at(0)


class _SegfaultsOn17Elements(ReferencePartitioner):
    """The reference partitioner, but its partition() dies of SIGSEGV on a graph that holds a tensor of 17
    elements (the corpus's 'rank1_odd' cases): a partitioner with a native helper that crashes on some
    shapes only."""

    def partition(self, exported_program):
        for node in exported_program.graph.nodes:
            val = node.meta.get("val")
            if isinstance(val, torch.Tensor) and val.numel() == 17:
                _segfault()
        return super().partition(exported_program)


# Crashes the lowering of every batch that holds a 'rank1_odd' case: OPS-1 must name each such case as crashed
# and judge the others.
LOWERING_SEGV_ON_17 = dataclasses.replace(
    REFERENCE, make_partitioners=lambda: [_SegfaultsOn17Elements([blob_format_spec(*BLOB_FORMAT)])]
)
