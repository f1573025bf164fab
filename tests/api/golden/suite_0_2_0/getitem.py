"""Golden vendor descriptor of suite 0.2.0 (as first released, commit eba1ef7): the reference backend's
descriptor of then, with the non-schema entry a vendor with a BatchNorm sample listed in
``supported_ops`` (``"<built-in function getitem>"``: BatchNorm's getitem nodes were tagged and AOT-4
of that suite wanted every tagged target declared).

Recovered with ``git show eba1ef7:reference_backend/python/reference_backend/conformance.py``. The
only edit besides the entry: the blob header is decoded with ``backend_kit.header.decode`` (the
reference backend's own ``blob_header`` module of then moved into the kit); everything the module
writes against the suite is as it was."""

from __future__ import annotations

import torch

from backend_kit.header import decode, payload_of
from conformance.descriptor import BackendDescriptor, NamedDataSupport, SampleModel
from reference_backend.compile_specs import blob_format_spec, named_data_specs
from reference_backend.ops import SUPPORTED_OPS
from reference_backend.partitioner import ReferencePartitioner
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
    supported_ops=frozenset(SUPPORTED_OPS) | {"<built-in function getitem>"},
    sample_models=(
        SampleModel("mlp", lambda: (_MLP(), (torch.randn(4, 16),))),
        SampleModel("elementwise", lambda: (_Elementwise(), (torch.randn(3, 8), torch.randn(3, 8)))),
        SampleModel("partially_delegated", lambda: (_Mixed(), (torch.randn(2, 12),))),
        SampleModel("large_mlp", lambda: (_LargeMLP(), (torch.randn(4, 256),)), rtol=1e-4, atol=1e-5),
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
)
