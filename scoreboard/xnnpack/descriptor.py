"""A descriptor of ExecuTorch's own XNNPACK delegate, as the executorch 1.5.1 wheel ships it.

XNNPACK's runtime is linked into ExecuTorch's Python runtime (``_C`` NEEDS
``lib/libexecutorch_backend_xnnpack.so``), so it is registered when ``executorch.runtime`` is
imported, before any load_runtime(): the descriptor says so (``registered_at_import``) and
load_runtime() loads nothing.

The operators and dtypes are what XnnpackPartitioner claims in ExecuTorch 1.5.1 for float32, as
found by running the corpus (OPS-1) with every corpus operator declared:
``python benchmarks/operator_corpus.py --backend scoreboard.xnnpack.descriptor:DESCRIPTOR --discover``.
Traits it does not claim are declared with ``without``.

Capabilities: the PT2E quantized flow with ExecuTorch's XNNPACKQuantizer (symmetric int8) and
upper-bounded dynamic shapes are declared. Named data is not: XNNPACK keeps its constants in the
named data of the .pte, and moving them into a .ptd takes an export-time pass
(``executorch.exir.passes.external_constants_pass``) rather than a partitioner's compile spec, which
``NamedDataSupport`` cannot express. Composition (lowering next to XNNPACK) is not meaningful for
XNNPACK itself.

Its blobs carry XNNPACK's own format identifier instead of the contract header: ``incompatible_blobs``
makes RT-5's incompatible blob in that format.
"""

from __future__ import annotations

import struct
from pathlib import Path

from conformance.descriptor import (
    BackendDescriptor,
    DynamicShapesSupport,
    IncompatibleBlob,
    QuantizedSupport,
)
from conformance.operators import OperatorSupport
from scoreboard.samples import small_convnet_tokens, token_dims
from scoreboard.wheel import executorch_lib, executorch_version


def _partitioners():
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    return [XnnpackPartitioner()]


def _load_runtime():
    """XNNPACK is linked into ExecuTorch's Python runtime (registered at import): nothing to load."""
    return


def runtime_libraries() -> list[Path]:
    """The library that registers XnnpackBackend: the wheel's lib/libexecutorch_backend_xnnpack.so."""
    return [executorch_lib("libexecutorch_backend_xnnpack.so")]


#: XNNPACK's blob (executorch 1.5.1): a header ("XH00" at byte 4, the flatbuffer's offset as a little-endian
#: uint32 at byte 10), then the flatbuffer, whose file identifier (4 bytes after its root offset) names the
#: serialization format: the runtime reads XN00 and XN01 and refuses any other with 0x30.
_HEADER_MAGIC = b"XH00"
_FORMATS_READ = (b"XN00", b"XN01")


def incompatible_blobs(blob: bytes) -> list[IncompatibleBlob]:
    """XNNPACK's own version refusal (C-RT-5): the blob with its serialization format identifier set to
    XN02, a format after the ones this runtime reads."""
    if blob[4:8] != _HEADER_MAGIC:
        raise ValueError(
            f"the blob does not start with XNNPACK's header (bytes 4-8 are {blob[4:8]!r}, not XH00)"
        )
    (start,) = struct.unpack_from("<I", blob, 10)
    written = blob[start + 4 : start + 8]
    if written not in _FORMATS_READ:
        raise ValueError(f"the flatbuffer at byte {start} has identifier {written!r}, not XN00 or XN01")
    forged = bytearray(blob)
    forged[start + 4 : start + 8] = b"XN02"
    return [
        IncompatibleBlob(
            f"serialization format XN02 (written: {written.decode()})",
            bytes(forged),
            "XN02",
            written.decode(),
        )
    ]


def _quantizer():
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )

    return XNNPACKQuantizer().set_global(get_symmetric_quantization_config())


#: operator -> the traits of its cases XnnpackPartitioner does not claim (found with --discover)
FLOAT32_OPS: dict[str, tuple[str, ...]] = {
    "aten::add.Tensor": ("empty",),
    "aten::sub.Tensor": ("empty",),
    "aten::mul.Tensor": ("empty",),
    "aten::div.Tensor": ("empty",),
    "aten::pow.Tensor_Scalar": ("empty",),
    "aten::maximum": ("empty",),
    "aten::minimum": ("empty",),
    "aten::neg": ("empty",),
    "aten::abs": ("empty",),
    "aten::ceil": ("empty",),
    "aten::floor": ("empty",),
    "aten::sqrt": ("empty",),
    "aten::rsqrt": ("empty",),
    "aten::exp": ("empty",),
    "aten::log": ("empty",),
    "aten::clamp": ("empty",),
    "aten::relu": ("empty",),
    "aten::sigmoid": ("empty",),
    "aten::tanh": ("empty",),
    "aten::gelu": ("empty",),
    "aten::silu": ("empty",),
    "aten::log_sigmoid_forward": ("empty",),
    "aten::leaky_relu": ("empty",),
    "aten::hardtanh": ("empty",),
    "aten::hardsigmoid": ("empty",),
    "aten::hardswish": ("empty",),
    "aten::view_copy": ("empty",),
    "aten::permute_copy": ("empty",),
    "aten::cat": ("empty",),
    "aten::glu": (),
    "aten::_prelu_kernel": ("case:rank2_single", "case:rank1"),
    "aten::_softmax": ("case:rank3_dim1",),
    "aten::mean.dim": (
        "case:rank1_all",
        "case:rank2_last",
        "case:rank2_first_keepdim",
        "case:rank3_middle",
        "case:rank4_channels_last",
        "case:size1_dim",
        "case:long",
        "case:stress",
    ),
    "aten::linear": (),
    "aten::bmm": (),
    "aten::convolution": ("case:conv3d", "case:conv_transpose3d"),
    "aten::avg_pool2d": ("case:k3_s1_pad", "case:k3_s2_ceil"),
    "aten::max_pool2d_with_indices": ("case:with_indices",),
    "aten::upsample_bilinear2d.vec": (),
    "aten::unsqueeze_copy": ("case:front",),
    "aten::slice_copy.Tensor": ("empty", "case:step2"),
    "aten::stack": (),
    "aten::lstm.input": (),
}

#: XNNPACK runs every operator with denormals disabled (xnn_run_operator passes pthreadpool's
#: PTHREADPOOL_FLAG_DISABLE_DENORMALS: flush-to-zero and denormals-are-zero on x86 and Arm), so the corpus's
#: subnormal cases of mul, div, sqrt, log, ceil and floor match only the flushed result: a declared deviation.
OPERATORS = OperatorSupport(
    {op: OperatorSupport.float32(op, without=without)[op] for op, without in FLOAT32_OPS.items()}
).flushing_subnormals()


def descriptor(operators=None) -> BackendDescriptor:
    return BackendDescriptor(
        backend_id="XnnpackBackend",
        distribution="executorch",
        python_package="executorch.backends.xnnpack",
        version=executorch_version(),
        make_partitioners=_partitioners,
        sample_models=small_convnet_tokens(),
        load_runtime=_load_runtime,
        runtime_libraries=runtime_libraries,
        registered_at_import=True,
        incompatible_blobs=incompatible_blobs,
        quantized=QuantizedSupport("convnet", _quantizer, max_steps=1.0),
        dynamic_shapes=DynamicShapesSupport("tokens", token_dims),
        operators=OPERATORS if operators is None else operators,
    )


DESCRIPTOR = descriptor()
