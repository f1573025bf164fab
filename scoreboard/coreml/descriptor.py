"""A descriptor of ExecuTorch's Core ML delegate, as the executorch 1.5.1 wheel ships it, judged ahead of time.

Core ML's runtime runs on Apple's operating systems only; on this Linux host the delegate's Python side
(``executorch.backends.apple.coreml``: ``CoreMLPartitioner`` and the ``CoreMLBackend`` preprocess, which
converts each partition with coremltools, a default dependency of the wheel on x86-64 Linux) lowers and
serializes programs, and nothing executes them. The descriptor therefore declares no ``load_runtime``: every
check that needs the runtime is not applicable and says so, and what is judged is registration of the
preprocess, lowering, determinism, serialization, the declared operators' claiming (OPS-1) and packaging.

The operators are what CoreMLPartitioner claims in ExecuTorch 1.5.1 for float32, found by running the corpus
with every corpus operator declared:
``python benchmarks/operator_corpus.py --backend scoreboard.coreml.descriptor:DESCRIPTOR --discover``.
No capability is declared: the quantized flow needs Core ML's quantizer and its runtime to judge the results.
The partitioner targets iOS 18 (``_partitioners``): with the default target, CoreMLPartitioner claims a
program's mutable buffers and its preprocess then refuses them ("State model is supported only >= iOS18").
"""

from __future__ import annotations

from conformance.descriptor import BackendDescriptor
from conformance.operators import OperatorSupport
from scoreboard.samples import small_convnet_tokens
from scoreboard.wheel import executorch_version


def _partitioners():
    """CoreMLPartitioner for iOS 18 / macOS 15: it takes a program's mutable buffers over as Core ML state by
    default, which its preprocess refuses for an earlier deployment target (the LLM tier's KV cache)."""
    import coremltools as ct
    from executorch.backends.apple.coreml.compiler import CoreMLBackend
    from executorch.backends.apple.coreml.partition import CoreMLPartitioner

    specs = CoreMLBackend.generate_compile_specs(minimum_deployment_target=ct.target.iOS18)
    return [CoreMLPartitioner(compile_specs=specs)]


#: operator -> the traits of its cases CoreMLPartitioner does not claim (found with --discover: every operand in
#: channels-last dim order is left on CPU). Not declared: trunc and 3-D adaptive average pooling, which it
#: leaves on CPU, and 3-D max pooling, whose lowering fails (--discover prints why).
FLOAT32_OPS: dict[str, tuple[str, ...]] = {
    "aten::add.Tensor": ("channels_last",),
    "aten::sub.Tensor": ("channels_last",),
    "aten::mul.Tensor": ("channels_last",),
    "aten::div.Tensor": ("channels_last",),
    "aten::div.Tensor_mode": ("channels_last",),
    "aten::pow.Tensor_Tensor": ("channels_last",),
    "aten::pow.Tensor_Scalar": ("channels_last",),
    "aten::maximum": ("channels_last",),
    "aten::minimum": ("channels_last",),
    "aten::neg": ("channels_last",),
    "aten::abs": ("channels_last",),
    "aten::ceil": ("channels_last",),
    "aten::floor": ("channels_last",),
    "aten::round": ("channels_last",),
    "aten::sqrt": ("channels_last",),
    "aten::rsqrt": ("channels_last",),
    "aten::exp": ("channels_last",),
    "aten::log": ("channels_last",),
    "aten::log2": ("channels_last",),
    "aten::log10": ("channels_last",),
    "aten::log1p": ("channels_last",),
    "aten::clamp": ("channels_last",),
    "aten::relu": ("channels_last",),
    "aten::sigmoid": ("channels_last",),
    "aten::tanh": ("channels_last",),
    "aten::gelu": ("channels_last",),
    "aten::silu": ("channels_last",),
    "aten::log_sigmoid_forward": ("channels_last",),
    "aten::elu": ("channels_last",),
    "aten::leaky_relu": ("channels_last",),
    "aten::hardtanh": ("channels_last",),
    "aten::hardsigmoid": ("channels_last",),
    "aten::hardswish": ("channels_last",),
    "aten::threshold": ("channels_last",),
    "aten::glu": (),
    "aten::_prelu_kernel": (),
    "aten::_softmax": (),
    "aten::_log_softmax": (),
    "aten::sum.dim_IntList": ("channels_last",),
    "aten::mean.dim": ("channels_last",),
    "aten::amax": ("channels_last",),
    "aten::amin": ("channels_last",),
    "aten::argmax": ("channels_last",),
    "aten::argmin": ("channels_last",),
    "aten::linear": (),
    "aten::mm": (),
    "aten::bmm": (),
    "aten::addmm": (),
    "aten::convolution": ("channels_last", "case:conv_transpose2d_output_padding"),
    "aten::avg_pool2d": ("channels_last",),
    "aten::avg_pool1d": (),
    "aten::avg_pool3d": (),
    "aten::max_pool2d_with_indices": ("channels_last", "case:dilation", "case:with_indices"),
    "aten::max_pool1d": ("case:k2",),
    "aten::_adaptive_avg_pool2d": (),
    "aten::adaptive_avg_pool1d": (),
    "aten::upsample_bilinear2d.vec": (),
    "aten::upsample_nearest2d.vec": (),
    "aten::view_copy": ("empty",),
    "aten::permute_copy": (),
    "aten::expand_copy": (),
    "aten::squeeze_copy.dims": (),
    "aten::unsqueeze_copy": (),
    "aten::select_copy.int": (),
    "aten::slice_copy.Tensor": (),
    "aten::split_with_sizes_copy": (),
    "aten::cat": (),
    "aten::stack": (),
    "aten::index_select": (),
    "aten::index.Tensor": (),
    "aten::index_put": (),
    "aten::masked_fill.Scalar": (),
    "aten::where.self": (),
    "aten::embedding": (),
    "aten::lstm.input": (),
}

OPERATORS = OperatorSupport(
    {op: OperatorSupport.float32(op, without=without)[op] for op, without in FLOAT32_OPS.items()}
)


def descriptor(operators=None) -> BackendDescriptor:
    return BackendDescriptor(
        backend_id="CoreMLBackend",
        distribution="executorch",
        python_package="executorch.backends.apple.coreml",
        version=executorch_version(),
        make_partitioners=_partitioners,
        sample_models=small_convnet_tokens(),
        # CoreMLPartitioner keeps 2-D convolutions undecomposed (the corpus names them aten::convolution)
        operators=OperatorSupport.float32("aten::conv2d") | (OPERATORS if operators is None else operators),
    )


DESCRIPTOR = descriptor()
