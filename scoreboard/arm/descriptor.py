"""Descriptors of Arm's delegates as the executorch 1.5.1 wheel ships them: the TOSA floating-point and integer
flows (``TOSA_FP``, ``TOSA_INT``) with their numerics in the TOSA reference model (tosa-tools 2026.5.0) through
the suite's simulator target (docs/contract.md, "Simulated runtimes"), and the Ethos-U55/U85 and VGF flows ahead
of time (``ETHOS_U55``, ``ETHOS_U85``, ``VGF_FP``). The integer flows take only quantized graphs: their samples
and corpus cases are quantized with Arm's quantizers first (``QuantizedSupport.every_sample``).

The TOSA flow has no runtime on any host: its payload is a TOSA graph that Arm's Ethos-U and VGF flows
compile further, and that ExecuTorch's own Arm tests check by running it in the TOSA reference model. The
descriptors declare no ``load_runtime`` and name ``scoreboard.arm.tosa_simulator.simulate`` as the simulator:
every runtime check runs the program in ExecuTorch's runtime with the TOSA delegates computed by the reference
model, and is reported simulated.

Names. Arm's public API (the names ``executorch.backends.arm`` exports lazily, which its public API manifest
lists) holds the Ethos-U and VGF partitioners and compile specs and the Ethos-U/VGF quantizers, but not the
TOSA partitioner, compile spec or quantizer that a TOSA-only flow needs: ``TOSAPartitioner``
(``executorch.backends.arm.tosa.partitioner``), ``TosaCompileSpec`` (``...arm.tosa.compile_spec``) and
``TOSAQuantizer`` (``...arm.quantizer``). The descriptors use them, and the triage records that as a contract
finding (scoreboard/triage.json): a TOSA-only flow is reachable only through names Arm does not promise.

The environment: tosa-tools pins numpy<2.2 and flatbuffers==25.2.10, so the row runs in an environment of its
own (``tox -e scoreboard-arm``; scoreboard/README.md).

The operators are what TOSAPartitioner claims for float32 in ExecuTorch 1.5.1, found by running the corpus with
every corpus operator declared:
``python benchmarks/operator_corpus.py --backend scoreboard.arm.descriptor:TOSA_FP --discover``.
"""

from __future__ import annotations

from conformance.descriptor import BackendDescriptor, QuantizedSupport
from conformance.operators import OperatorSupport
from scoreboard.arm.tosa_simulator import simulate
from scoreboard.samples import small_convnet_tokens
from scoreboard.wheel import executorch_version


def _arm_descriptor(backend_id: str, **fields) -> BackendDescriptor:
    """A descriptor of one of Arm's backends in the executorch wheel (``backend_id``: its BackendDetails)."""
    return BackendDescriptor(
        backend_id=backend_id,
        distribution="executorch",
        python_package="executorch.backends.arm",
        version=executorch_version(),
        **fields,
    )


def _fp_partitioners():
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner

    return [TOSAPartitioner(TosaCompileSpec("TOSA-1.0+FP"))]


def _int_partitioners():
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner

    return [TOSAPartitioner(TosaCompileSpec("TOSA-1.0+INT"))]


def _int_quantizer():
    """Arm's TOSA quantizer for the INT profile with its symmetric int8 configuration (per-channel weights)."""
    from executorch.backends.arm.quantizer import TOSAQuantizer, get_symmetric_quantization_config
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec

    quantizer = TOSAQuantizer(TosaCompileSpec("TOSA-1.0+INT"))
    quantizer.set_global(get_symmetric_quantization_config())
    return quantizer


#: operator -> the cases TOSAPartitioner does not claim for float32 (--discover, 723 cases). Not declared, as it
#: claims none of their cases: trunc, log2, log10, argmax, argmin, avg_pool3d, max_pool3d_with_indices,
#: _adaptive_avg_pool3d, index_select, index.Tensor, index_put, embedding.
FLOAT32_OPS: dict[str, tuple[str, ...]] = {
    "aten::add.Tensor": (),
    "aten::sub.Tensor": (),
    "aten::mul.Tensor": (),
    "aten::div.Tensor": (),
    "aten::div.Tensor_mode": (),
    "aten::pow.Tensor_Tensor": (),
    "aten::pow.Tensor_Scalar": (),
    "aten::maximum": (),
    "aten::minimum": (),
    "aten::neg": (),
    "aten::abs": (),
    "aten::ceil": (),
    "aten::floor": (),
    "aten::round": (),
    "aten::sqrt": (),
    "aten::rsqrt": (),
    "aten::exp": (),
    "aten::log": (),
    "aten::log1p": (),
    "aten::clamp": (),
    "aten::relu": (),
    "aten::sigmoid": (),
    "aten::tanh": (),
    "aten::gelu": (),
    "aten::silu": (),
    "aten::log_sigmoid_forward": (),
    "aten::elu": (),
    "aten::leaky_relu": (),
    "aten::hardtanh": (),
    "aten::hardsigmoid": (),
    "aten::hardswish": (),
    "aten::threshold": (),
    "aten::glu": (),
    "aten::_prelu_kernel": (),
    "aten::_softmax": (),
    "aten::_log_softmax": (),
    "aten::sum.dim_IntList": ("case:rank1_all",),
    "aten::mean.dim": ("case:rank1_all",),
    "aten::amax": ("case:rank1_all",),
    "aten::amin": ("case:rank1_all",),
    "aten::linear": (),
    "aten::mm": (),
    "aten::bmm": (),
    "aten::addmm": (),
    "aten::convolution": ("case:conv_transpose1d", "case:conv_transpose3d"),
    "aten::avg_pool2d": (),
    "aten::avg_pool1d": (),
    "aten::max_pool2d_with_indices": ("case:with_indices",),
    "aten::max_pool1d": (),
    "aten::_adaptive_avg_pool2d": (),
    "aten::adaptive_avg_pool1d": (),
    "aten::upsample_bilinear2d.vec": (),
    "aten::upsample_nearest2d.vec": (),
    "aten::view_copy": ("case:split_dim", "case:to_rank0", "case:from_rank0", "case:rank4", "case:size0"),
    "aten::permute_copy": (),
    "aten::expand_copy": (),
    "aten::squeeze_copy.dims": ("case:to_rank0",),
    "aten::unsqueeze_copy": (),
    "aten::select_copy.int": ("case:to_rank0",),
    "aten::slice_copy.Tensor": ("case:to_size0",),
    "aten::split_with_sizes_copy": (),
    "aten::cat": (),
    "aten::stack": (),
    "aten::masked_fill.Scalar": (),
    "aten::where.self": (),
    "aten::lstm.input": (),
}

OPERATORS = OperatorSupport(
    {op: OperatorSupport.float32(op, without=without)[op] for op, without in FLOAT32_OPS.items()}
)


def tosa_fp(operators=None) -> BackendDescriptor:
    return _arm_descriptor(
        "TOSABackend",
        make_partitioners=_fp_partitioners,
        sample_models=small_convnet_tokens(),
        operators=OPERATORS if operators is None else operators,
        simulator=simulate,
    )


TOSA_FP = tosa_fp()


#: operator -> the cases of its float32 corpus cases, quantized by TOSAQuantizer, that TOSAPartitioner does not
#: claim for TOSA-1.0+INT (``benchmarks/operator_corpus.py --backend scoreboard.arm.descriptor:TOSA_INT
#: --discover --quantized-only --vendor-python .venv-arm/bin/python``, 658 cases). Not declared, as it claims
#: none of their cases: pow.Tensor_Tensor, trunc, log2, log_sigmoid_forward, threshold, argmax, argmin,
#: avg_pool1d, avg_pool3d, max_pool1d, max_pool3d_with_indices, adaptive_avg_pool1d, _adaptive_avg_pool3d.
INT_OPS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        (
            "aten::add.Tensor",
            "aten::sub.Tensor",
            "aten::div.Tensor",
            "aten::div.Tensor_mode",
            "aten::pow.Tensor_Scalar",
            "aten::maximum",
            "aten::minimum",
            "aten::neg",
            "aten::abs",
            "aten::ceil",
            "aten::floor",
            "aten::round",
            "aten::sqrt",
            "aten::rsqrt",
            "aten::exp",
            "aten::log",
            "aten::log10",
            "aten::log1p",
            "aten::clamp",
            "aten::relu",
            "aten::sigmoid",
            "aten::tanh",
            "aten::gelu",
            "aten::silu",
            "aten::elu",
            "aten::leaky_relu",
            "aten::hardtanh",
            "aten::hardsigmoid",
            "aten::hardswish",
            "aten::glu",
            "aten::_prelu_kernel",
            "aten::_softmax",
            "aten::_log_softmax",
            "aten::linear",
            "aten::mm",
            "aten::bmm",
            "aten::addmm",
            "aten::avg_pool2d",
            "aten::_adaptive_avg_pool2d",
            "aten::upsample_bilinear2d.vec",
            "aten::upsample_nearest2d.vec",
            "aten::permute_copy",
            "aten::expand_copy",
            "aten::unsqueeze_copy",
            "aten::split_with_sizes_copy",
            "aten::cat",
            "aten::stack",
            "aten::index_select",
            "aten::index.Tensor",
            "aten::index_put",
            "aten::masked_fill.Scalar",
            "aten::where.self",
            "aten::embedding",
            "aten::lstm.input",
        ),
        (),
    ),
    "aten::mul.Tensor": ("stress",),
    "aten::sum.dim_IntList": ("case:rank1_all",),
    "aten::mean.dim": ("case:rank1_all", "case:size1_dim"),
    "aten::amax": ("case:rank1_all",),
    "aten::amin": ("case:rank1_all",),
    "aten::convolution": ("case:conv_transpose1d", "case:conv_transpose3d"),
    "aten::max_pool2d_with_indices": ("case:with_indices",),
    "aten::view_copy": ("case:flatten", "case:split_dim", "case:to_rank0"),
    "aten::squeeze_copy.dims": ("case:to_rank0",),
    "aten::select_copy.int": ("case:to_rank0",),
    "aten::slice_copy.Tensor": ("case:to_size0",),
}


#: What the INT flow claims: quantize/dequantize (the corpus's hand-made quantized patterns are not run for a
#: backend whose samples are all quantized), and each operator inside quantized patterns only.
def _quantized_operators(ops: dict[str, tuple[str, ...]]) -> OperatorSupport:
    return OperatorSupport.float32(
        "quantized_decomposed::quantize_per_tensor",
        "quantized_decomposed::dequantize_per_tensor",
        "quantized_decomposed::dequantize_per_channel",
    ) | OperatorSupport(
        {op: OperatorSupport.in_quantized_patterns(op, without=without)[op] for op, without in ops.items()}
    )


INT_OPERATORS = _quantized_operators(INT_OPS)


def tosa_int(operators=None) -> BackendDescriptor:
    """The TOSA integer flow (``TOSA-1.0+INT``): every sample quantized with Arm's TOSA quantizer before it is
    lowered (``quantized.every_sample``), as the flow takes only integer graphs."""
    return _arm_descriptor(
        "TOSABackend",
        make_partitioners=_int_partitioners,
        sample_models=small_convnet_tokens(atol=0.1),
        quantized=QuantizedSupport("convnet", _int_quantizer, max_steps=1.0, every_sample=True),
        operators=INT_OPERATORS if operators is None else operators,
        simulator=simulate,
    )


TOSA_INT = tosa_int()


# --------------------------------------------------------------------------- ahead of time: Ethos-U and VGF
# These flows compile the TOSA graph further (Vela for the Ethos-U NPUs, Arm's model converter for VGF); their
# runtimes run on the NPU or on Vulkan with Arm's ML extensions, so no runtime or simulator is declared here and
# the runtime checks are not applicable. Only names of Arm's public API are used.


def _ethos_u_spec(target: str):
    from executorch.backends.arm import EthosUCompileSpec

    return EthosUCompileSpec(target)


def _ethos_u_quantizer(target: str):
    from executorch.backends.arm import EthosUQuantizer, get_symmetric_quantization_config

    quantizer = EthosUQuantizer(_ethos_u_spec(target))
    quantizer.set_global(get_symmetric_quantization_config())
    return quantizer


def ethos_u(target: str, operators: OperatorSupport) -> BackendDescriptor:
    """Arm's Ethos-U flow for ``target`` (an EthosUCompileSpec target such as 'ethos-u55-128'): every sample
    quantized with EthosUQuantizer, lowered with EthosUPartitioner and compiled by Vela, ahead of time."""
    from functools import partial

    def partitioners():
        from executorch.backends.arm import EthosUPartitioner

        return [EthosUPartitioner(_ethos_u_spec(target))]

    return _arm_descriptor(
        "EthosUBackend",
        make_partitioners=partitioners,
        sample_models=small_convnet_tokens(atol=0.1),
        quantized=QuantizedSupport("convnet", partial(_ethos_u_quantizer, target), every_sample=True),
        operators=operators,
    )


#: operator -> the cases of its quantized float32 corpus cases EthosUPartitioner does not claim for ethos-u55-128
#: (``benchmarks/operator_corpus.py --backend scoreboard.arm.descriptor:ETHOS_U55 --discover --quantized-only
#: --vendor-python .venv-arm/bin/python``, 658 cases, 27 min). "empty": it claims operands with no elements, and
#: Vela then kills the process (SIGSEGV in regor.compile; scoreboard/reproducers/arm_ethos_u_zero_size_vela_crash.py).
#: Not declared, as it claims none of their cases: the 13 the INT flow does not declare (see INT_OPS), and
#: upsample_bilinear2d, index_select, index.Tensor, index_put, masked_fill.Scalar, where.self.
U55_OPS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        (
            *("aten::add.Tensor", "aten::sub.Tensor", "aten::div.Tensor", "aten::div.Tensor_mode"),
            *("aten::pow.Tensor_Scalar", "aten::maximum", "aten::minimum", "aten::neg", "aten::abs"),
            *("aten::ceil", "aten::floor", "aten::round", "aten::sqrt", "aten::rsqrt", "aten::exp"),
            *("aten::log", "aten::log10", "aten::log1p", "aten::clamp", "aten::relu", "aten::sigmoid"),
            *("aten::tanh", "aten::gelu", "aten::silu", "aten::elu", "aten::leaky_relu", "aten::hardtanh"),
            *("aten::hardsigmoid", "aten::hardswish", "aten::permute_copy", "aten::slice_copy.Tensor"),
            "aten::cat",
        ),
        ("empty",),
    ),
    **dict.fromkeys(
        (
            *("aten::glu", "aten::_prelu_kernel", "aten::_softmax", "aten::_log_softmax", "aten::linear"),
            *("aten::mm", "aten::bmm", "aten::addmm", "aten::_adaptive_avg_pool2d", "aten::expand_copy"),
            *("aten::unsqueeze_copy", "aten::split_with_sizes_copy", "aten::stack", "aten::lstm.input"),
        ),
        (),
    ),
    "aten::mul.Tensor": ("empty", "stress"),
    **{op: INT_OPS[op] for op in ("aten::sum.dim_IntList", "aten::mean.dim", "aten::amax", "aten::amin")},
    **{op: INT_OPS[op] for op in ("aten::max_pool2d_with_indices", "aten::squeeze_copy.dims")},
    "aten::select_copy.int": ("case:to_rank0",),
    "aten::convolution": ("case:conv3d", "case:conv_transpose1d", "case:conv_transpose3d"),
    "aten::avg_pool2d": ("case:k2_s2", "case:rect", "case:output1x1"),
    "aten::upsample_nearest2d.vec": ("case:size",),
    "aten::view_copy": ("case:split_dim", "case:to_rank0", "case:from_rank0", "case:rank4", "case:size0"),
    "aten::embedding": ("case:rank1",),
}

ETHOS_U55 = ethos_u("ethos-u55-128", _quantized_operators(U55_OPS))

#: The operators whose cases with no elements EthosUPartitioner claims for ethos-u85-256, and Vela then kills
#: the process (SIGFPE in regor.compile, as SIGSEGV for ethos-u55-128; the same reproducer), and cat, whose
#: case with an empty operand it does not claim.
_U85_EMPTY = (
    *(
        "aten::add.Tensor",
        "aten::sub.Tensor",
        "aten::mul.Tensor",
        "aten::div.Tensor",
        "aten::div.Tensor_mode",
    ),
    *("aten::pow.Tensor_Scalar", "aten::maximum", "aten::minimum", "aten::neg", "aten::abs", "aten::ceil"),
    *("aten::floor", "aten::round", "aten::sqrt", "aten::rsqrt", "aten::exp", "aten::log", "aten::log10"),
    *("aten::log1p", "aten::clamp", "aten::relu", "aten::sigmoid", "aten::tanh", "aten::gelu", "aten::silu"),
    *("aten::elu", "aten::leaky_relu", "aten::hardtanh", "aten::hardsigmoid", "aten::hardswish"),
    *("aten::permute_copy", "aten::cat"),
)

#: operator -> the cases of its quantized float32 corpus cases EthosUPartitioner does not claim for ethos-u85-256
#: (``benchmarks/operator_corpus.py --backend scoreboard.arm.descriptor:ETHOS_U85 --discover --quantized-only
#: --vendor-python .venv-arm/bin/python``, 658 cases, 66 min on a loaded machine): the INT flow's declaration
#: (INT_OPS), with "empty" for _U85_EMPTY. view_copy is claimed inside a larger partition (the convnet sample's
#: flatten, which AOT-4 sees) but in none of its corpus cases, where a reshape is all there is: it is declared
#: with every one of them unsupported. Unlike ethos-u55-128 it claims every case of avg_pool2d, 3-D convolution,
#: bilinear upsampling, index_select, index.Tensor, index_put, masked_fill.Scalar and where.self.
U85_OPS: dict[str, tuple[str, ...]] = {
    **{op: ("empty", *without) if op in _U85_EMPTY else without for op, without in INT_OPS.items()},
    "aten::view_copy": tuple(
        f"case:{case}" for case in ("flatten", "split_dim", "to_rank0", "from_rank0", "rank4", "size0")
    ),
}

ETHOS_U85 = ethos_u("ethos-u85-256", _quantized_operators(U85_OPS))


def _vgf_partitioners():
    import os
    import sys

    from executorch.backends.arm import VgfCompileSpec, VgfPartitioner

    # Arm's VGF flow runs the `model-converter` executable (ai_ml_sdk_model_converter) found on PATH; in the
    # row's environment it is beside the interpreter, as in an activated virtual environment.
    here = os.path.dirname(sys.executable)
    if here not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([here, os.environ.get("PATH", "")])
    return [VgfPartitioner(VgfCompileSpec("TOSA-1.0+FP"))]


def vgf_fp(operators=None) -> BackendDescriptor:
    """Arm's VGF flow for floating point (``VgfCompileSpec("TOSA-1.0+FP")``): the TOSA graph converted to a VGF
    file by Arm's model converter, ahead of time."""
    return _arm_descriptor(
        "VgfBackend",
        make_partitioners=_vgf_partitioners,
        sample_models=small_convnet_tokens(),
        operators=OPERATORS if operators is None else operators,
    )


VGF_FP = vgf_fp()
