"""The adapter's descriptor for the conformance suite (entry point
``executorch_conformance.backends``):

    executorch-conformance run --backend XnnpackAdapterBackend --certify
"""

from __future__ import annotations

import torch

from conformance.descriptor import BackendDescriptor, SampleModel
from conformance.operators import OperatorSupport
from xnnpack_adapter import RUNTIME, XnnpackAdapterPartitioner
from xnnpack_adapter.version import BACKEND_ID, DISTRIBUTION, __version__


class _MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class _ConvNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return torch.tanh(y) * y + y


#: What the adapter declares: operators XNNPACK's partitioner claims and computes like eager PyTorch in
#: every corpus case but those named in ``without``. Left out: aten::sigmoid, which XNNPACK claims and
#: computes as NaN for large-magnitude and infinite inputs (corpus cases 'stress' and 'inf_nan'), and
#: aten::mm / aten::addmm, which XNNPACK's partitioner leaves to ExecuTorch's CPU kernels.
_EMPTY = "XNNPACK's partitioner leaves tensors with a dimension of size 0 to ExecuTorch's CPU kernels"
OPERATORS = (
    OperatorSupport.float32(
        "aten::add.Tensor",
        "aten::sub.Tensor",
        "aten::mul.Tensor",
        "aten::relu",
        "aten::tanh",
        "aten::abs",
        "aten::neg",
        "aten::permute_copy",
        without=("empty",),
        reason=_EMPTY,
    )
    | OperatorSupport.float32(
        "aten::convolution",
        without=("case:conv3d", "case:conv_transpose3d"),
        reason="XNNPACK's partitioner leaves 3-D convolutions to ExecuTorch's CPU kernels",
    )
    | OperatorSupport.float32("aten::linear")
    # XNNPACK runs with denormals disabled (flush-to-zero, denormals-are-zero): see scoreboard/xnnpack/descriptor.py.
).flushing_subnormals()

DESCRIPTOR = BackendDescriptor(
    backend_id=BACKEND_ID,
    distribution=DISTRIBUTION,
    python_package="xnnpack_adapter",
    version=__version__,
    make_partitioners=lambda: [XnnpackAdapterPartitioner()],
    operators=OPERATORS,
    sample_models=(
        SampleModel("mlp", lambda: (_MLP(), (torch.randn(4, 16),)), rtol=1e-4, atol=1e-5),
        SampleModel("conv_net", lambda: (_ConvNet(), (torch.randn(1, 3, 8, 8),)), rtol=1e-4, atol=1e-5),
    ),
    load_runtime=RUNTIME.load,
    runtime_libraries=RUNTIME.libraries,
)
