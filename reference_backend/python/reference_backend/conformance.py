"""The reference backend's descriptor for the conformance suite (found through
the ``executorch_conformance.backends`` entry point). Imported only by the
suite, so the backend itself does not depend on it."""

from __future__ import annotations

from pathlib import Path

import torch

from backend_kit.header import decode, payload_of
from conformance.descriptor import (
    AcceptanceRulesFile,
    BackendDescriptor,
    CompositionSupport,
    DynamicShapesSupport,
    NamedDataSupport,
    QuantizedSupport,
    SampleModel,
)
from conformance.operators import OperatorSupport
from reference_backend import float_ops
from reference_backend.compile_specs import blob_format_spec, named_data_specs
from reference_backend.ops import SUPPORTED_OPS
from reference_backend.partitioner import ReferencePartitioner
from reference_backend.quantizer import ReferenceQuantizer
from reference_backend.runtime import library_path, load_runtime
from reference_backend.serialize import named_entries
from reference_backend.version import BLOB_FORMAT, DISTRIBUTION, __version__

#: Constants of 16 KiB or more go to named data in reference_weights.ptd.
NAMED_DATA_THRESHOLD = 16 * 1024
NAMED_DATA_FILE = "reference_weights"


class _MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class _LargeMLP(torch.nn.Module):
    """320 KiB of weights: both go to named data, the biases stay in the blob."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(256, 256)
        self.fc2 = torch.nn.Linear(256, 64)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def _required_keys(blob: bytes) -> list[tuple[str, str | None]]:
    """The named-data keys a blob needs, from the table in its payload."""
    entries = named_entries(payload_of(blob), decode(blob).blob_format[1])
    return [(e.key, e.file) for e in entries]


class _Elementwise(torch.nn.Module):
    def forward(self, x, y):
        return torch.relu(x * y + x) - torch.sub(y, x, alpha=0.5)


class _Mixed(torch.nn.Module):
    """Supported ops around an unsupported one (exp stays on CPU)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(12, 12)

    def forward(self, x):
        return torch.relu(self.fc(torch.exp(x + 1.0))) * 2.0


class _QuantNet(torch.nn.Module):
    """Every operator the quantizer annotates: conv2d + relu (fused), add, relu, linear + relu."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.fc = torch.nn.Linear(16, 8)

    def forward(self, x, v):
        y = torch.relu(self.conv1(x))
        return torch.relu(self.conv2(y) + y), torch.relu(self.fc(v))


def _quant_inputs(generator: torch.Generator):
    return (torch.randn(1, 3, 8, 8, generator=generator), torch.randn(4, 16, generator=generator))


class _TokenMLP(torch.nn.Module):
    """x [batch, tokens, 16]; both leading dimensions dynamic."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))) + x


def _dynamic_shapes():
    return ({0: torch.export.Dim("batch", max=4), 1: torch.export.Dim("tokens", max=8)},)


#: Operators declared with dynamic shapes (bounded dimensions; the runtime infers their output sizes at every
#: call): the corpus's dynamic cases run for them.
_DYNAMIC_OPS = (
    "aten::add.Tensor",
    "aten::sub.Tensor",
    "aten::mul.Tensor",
    "aten::relu",
    "aten::linear",
    *float_ops.ELEMENTWISE,
)

#: Operators the partitioner claims with static shapes only (their corpus cases have no dynamic ones).
_STATIC_OPS = tuple(op for op in float_ops.OPERATORS if op not in _DYNAMIC_OPS)


#: Corpus cases of aten::convolution the runtime does not run (1-D, 3-D and transposed convolutions).
_NOT_2D_CONVOLUTIONS = (
    "conv1d",
    "conv1d_stride_pad",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose2d_output_padding",
    "conv_transpose3d",
)


DESCRIPTOR = BackendDescriptor(
    backend_id="ReferenceBackend",
    distribution=DISTRIBUTION,
    python_package="reference_backend",
    version=__version__,
    make_partitioners=lambda: [ReferencePartitioner([blob_format_spec(*BLOB_FORMAT)])],
    operators=OperatorSupport.float32(
        *_DYNAMIC_OPS,
        dynamic=True,
        without=("channels_last",),
        reason="the runtime reads every tensor in the default dim order, so the partitioner claims no other",
    )
    | OperatorSupport.float32(
        *(op for op in SUPPORTED_OPS if op not in _DYNAMIC_OPS + _STATIC_OPS and op != "aten::convolution"),
        without=("channels_last",),
        reason="the runtime reads every tensor in the default dim order, so the partitioner claims no other",
    )
    | OperatorSupport.float32(
        *(op for op in _STATIC_OPS if op != "aten::max_pool2d_with_indices"),
        without=("channels_last",),
        reason="the runtime reads every tensor in the default dim order, so the partitioner claims no other",
    )
    | OperatorSupport.float32(
        "aten::max_pool2d_with_indices",
        without=("channels_last", "case:with_indices"),
        reason="the runtime computes max_pool2d's values, not its int64 indices, in the default dim order",
    )
    | OperatorSupport.float32(
        "aten::convolution",
        without=("channels_last", *(f"case:{name}" for name in _NOT_2D_CONVOLUTIONS)),
        reason="the runtime convolves in 2-D only, not transposed, in the default dim order",
    ),
    sample_models=(
        SampleModel("mlp", lambda: (_MLP(), (torch.randn(4, 16),))),
        SampleModel("elementwise", lambda: (_Elementwise(), (torch.randn(3, 8), torch.randn(3, 8)))),
        SampleModel("partially_delegated", lambda: (_Mixed(), (torch.randn(2, 12),))),
        SampleModel("large_mlp", lambda: (_LargeMLP(), (torch.randn(4, 256),)), rtol=1e-4, atol=1e-5),
        SampleModel(
            "quant_net",
            lambda: (_QuantNet(), _quant_inputs(torch.Generator().manual_seed(0))),
            rtol=1e-5,
            atol=1e-5,
            make_inputs=_quant_inputs,
        ),
        SampleModel("token_mlp", lambda: (_TokenMLP(), (torch.randn(2, 3, 16),)), rtol=1e-5, atol=1e-5),
    ),
    load_runtime=load_runtime,
    runtime_libraries=lambda: [library_path()],
    named_data=NamedDataSupport(
        sample="large_mlp",
        make_partitioners=lambda: [
            ReferencePartitioner(
                [blob_format_spec(*BLOB_FORMAT), *named_data_specs(NAMED_DATA_THRESHOLD, NAMED_DATA_FILE)]
            )
        ],
        max_blob_bytes=16 * 1024,
        required_keys=_required_keys,
    ),
    quantized=QuantizedSupport(sample="quant_net", make_quantizer=ReferenceQuantizer, max_steps=1.0),
    dynamic_shapes=DynamicShapesSupport(sample="token_mlp", dynamic_shapes=_dynamic_shapes),
    composition=CompositionSupport(sample="partially_delegated"),
    # Which blobs each released runtime accepts: checked against this runtime by RT-7, read by
    # `executorch-conformance compat`.
    acceptance=AcceptanceRulesFile(str(Path(__file__).with_name("acceptance.json"))),
)
