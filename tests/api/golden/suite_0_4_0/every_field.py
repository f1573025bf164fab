"""Golden vendor descriptor of suite 0.4.0 that sets every field of the descriptor and of its support
classes, the optional ones included, each to a value other than its default where it has one:
``SampleModel`` (rtol, atol, delegated=False, make_inputs), ``operators`` (dtypes, dynamic, without,
reason), ``load_runtime``, ``runtime_libraries``, ``NamedDataSupport`` (required_keys),
``QuantizedSupport`` (max_steps), ``DynamicShapesSupport`` and ``CompositionSupport``.

It is the reference descriptor of 0.4.0 written out with keywords, plus a sample that is not delegated
(``cpu_only``: sigmoid, which the reference backend leaves to ExecuTorch's CPU kernels)."""

from __future__ import annotations

import torch
from suite_0_4_0 import reference

from conformance.descriptor import (
    BackendDescriptor,
    CompositionSupport,
    DynamicShapesSupport,
    NamedDataSupport,
    QuantizedSupport,
    SampleModel,
)
from conformance.operators import OperatorDeclaration, OperatorSupport
from reference_backend.compile_specs import blob_format_spec, named_data_specs
from reference_backend.ops import SUPPORTED_OPS
from reference_backend.partitioner import ReferencePartitioner
from reference_backend.quantizer import ReferenceQuantizer
from reference_backend.runtime import library_path, load_runtime
from reference_backend.version import BLOB_FORMAT, DISTRIBUTION, __version__


class _Sigmoid(torch.nn.Module):
    def forward(self, x):
        return torch.sigmoid(x)


_DEFAULT_ORDER = "the runtime reads every tensor in the default dim order, so the partitioner claims no other"

DESCRIPTOR = BackendDescriptor(
    backend_id="ReferenceBackend",
    distribution=DISTRIBUTION,
    python_package="reference_backend",
    version=__version__,
    make_partitioners=lambda: [ReferencePartitioner([blob_format_spec(*BLOB_FORMAT)])],
    supported_ops=frozenset(SUPPORTED_OPS),
    operators=OperatorSupport(
        {
            **{
                op: OperatorDeclaration(
                    dtypes=("float32",), dynamic=True, without=("channels_last",), reason=_DEFAULT_ORDER
                )
                for op in reference._DYNAMIC_OPS
            },
            **{
                op: OperatorDeclaration(
                    dtypes=("float32",), dynamic=False, without=("channels_last",), reason=_DEFAULT_ORDER
                )
                for op in SUPPORTED_OPS
                if op not in reference._DYNAMIC_OPS and op != "aten::convolution"
            },
            "aten::convolution": OperatorDeclaration(
                dtypes=("float32",),
                without=("channels_last", *(f"case:{name}" for name in reference._NOT_2D_CONVOLUTIONS)),
                reason="the runtime convolves in 2-D only, not transposed, in the default dim order",
            ),
        }
    ),
    sample_models=(
        SampleModel(name="mlp", make=lambda: (reference._MLP(), (torch.randn(4, 16),)), rtol=1e-5, atol=1e-5),
        SampleModel(
            name="elementwise",
            make=lambda: (reference._Elementwise(), (torch.randn(3, 8), torch.randn(3, 8))),
            rtol=1e-5,
            atol=1e-5,
            delegated=True,
        ),
        SampleModel("partially_delegated", lambda: (reference._Mixed(), (torch.randn(2, 12),))),
        SampleModel(
            "large_mlp", lambda: (reference._LargeMLP(), (torch.randn(4, 256),)), rtol=1e-4, atol=1e-5
        ),
        SampleModel(
            name="quant_net",
            make=lambda: (reference._QuantNet(), reference._quant_inputs(torch.Generator().manual_seed(0))),
            rtol=1e-5,
            atol=1e-5,
            delegated=True,
            make_inputs=reference._quant_inputs,
        ),
        SampleModel("token_mlp", lambda: (reference._TokenMLP(), (torch.randn(2, 3, 16),))),
        SampleModel(
            "cpu_only", lambda: (_Sigmoid(), (torch.randn(2, 5),)), rtol=1e-6, atol=1e-6, delegated=False
        ),
    ),
    load_runtime=load_runtime,
    runtime_libraries=lambda: [library_path()],
    named_data=NamedDataSupport(
        sample="large_mlp",
        make_partitioners=lambda: [
            ReferencePartitioner(
                [
                    blob_format_spec(*BLOB_FORMAT),
                    *named_data_specs(reference.NAMED_DATA_THRESHOLD, reference.NAMED_DATA_FILE),
                ]
            )
        ],
        max_blob_bytes=16 * 1024,
        required_keys=reference._required_keys,
    ),
    quantized=QuantizedSupport(sample="quant_net", make_quantizer=ReferenceQuantizer, max_steps=1.5),
    dynamic_shapes=DynamicShapesSupport(sample="token_mlp", dynamic_shapes=reference._dynamic_shapes),
    composition=CompositionSupport(sample="partially_delegated"),
)
