"""The reference backend's descriptor for the conformance suite (found through
the ``executorch_conformance.backends`` entry point). Imported only by the
suite, so the backend itself does not depend on it."""

from __future__ import annotations

import torch
from conformance.descriptor import BackendDescriptor, SampleModel

from reference_backend.compile_specs import blob_format_spec
from reference_backend.ops import SUPPORTED_OPS
from reference_backend.partitioner import ReferencePartitioner
from reference_backend.runtime import library_path, load_runtime
from reference_backend.version import BLOB_FORMAT, DISTRIBUTION, __version__


class _MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class _Elementwise(torch.nn.Module):
    def forward(self, x, y):
        return torch.relu(x * y + x) - torch.sub(y, x, alpha=0.5)


class _Mixed(torch.nn.Module):
    """Supported ops around an unsupported one (sigmoid stays on CPU)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(12, 12)

    def forward(self, x):
        return torch.relu(self.fc(torch.sigmoid(x + 1.0))) * 2.0


DESCRIPTOR = BackendDescriptor(
    backend_id="ReferenceBackend",
    distribution=DISTRIBUTION,
    python_package="reference_backend",
    version=__version__,
    make_partitioners=lambda: [ReferencePartitioner([blob_format_spec(*BLOB_FORMAT)])],
    supported_ops=frozenset(SUPPORTED_OPS),
    sample_models=(
        SampleModel("mlp", lambda: (_MLP(), (torch.randn(4, 16),))),
        SampleModel("elementwise", lambda: (_Elementwise(), (torch.randn(3, 8), torch.randn(3, 8)))),
        SampleModel("partially_delegated", lambda: (_Mixed(), (torch.randn(2, 12),))),
    ),
    load_runtime=load_runtime,
    runtime_libraries=lambda: [library_path()],
)
