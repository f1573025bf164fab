"""Descriptors of Arm's TOSA delegate, as the executorch 1.5.1 wheel ships it, with its numerics in the TOSA
reference model (tosa-tools 2026.5.0) through the suite's simulator target (docs/contract.md, "Simulated
runtimes").

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

from conformance.descriptor import BackendDescriptor
from conformance.operators import OperatorSupport
from scoreboard.arm.tosa_simulator import simulate
from scoreboard.samples import small_convnet_tokens
from scoreboard.wheel import executorch_version


def _fp_partitioners():
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner

    return [TOSAPartitioner(TosaCompileSpec("TOSA-1.0+FP"))]


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
    return BackendDescriptor(
        backend_id="TOSABackend",
        distribution="executorch",
        python_package="executorch.backends.arm",
        version=executorch_version(),
        make_partitioners=_fp_partitioners,
        sample_models=small_convnet_tokens(),
        operators=OPERATORS if operators is None else operators,
        simulator=simulate,
    )


TOSA_FP = tosa_fp()
