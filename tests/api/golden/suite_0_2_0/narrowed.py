"""Golden vendor descriptor of suite 0.2.0: a narrower copy made with ``dataclasses.replace``, the way
the suite's own broken backends were derived then (``git show
eba1ef7:tests/conformance/broken/broken_backends/descriptors.py``), from a descriptor written as the
reference backend's was at eba1ef7 (``supported_ops`` only, no ``operators``).

``NARROWED`` no longer declares ``aten::sub.Tensor``, but its partitioner still claims it in the
``elementwise`` sample: AOT-4 must fail. The suite of eba1ef7 said so; from the operator corpus on
(0.2.0 as released, 0.3.0, 0.4.0) ``__post_init__`` re-added the operator and AOT-4 passed (a false
pass, issue 29)."""

from __future__ import annotations

import dataclasses

import torch

from conformance.descriptor import BackendDescriptor, SampleModel
from reference_backend.compile_specs import blob_format_spec
from reference_backend.ops import SUPPORTED_OPS
from reference_backend.partitioner import ReferencePartitioner
from reference_backend.runtime import library_path, load_runtime
from reference_backend.version import BLOB_FORMAT, DISTRIBUTION, __version__


class _Elementwise(torch.nn.Module):
    def forward(self, x, y):
        return torch.relu(x * y + x) - torch.sub(y, x, alpha=0.5)


DESCRIPTOR = BackendDescriptor(
    backend_id="ReferenceBackend",
    distribution=DISTRIBUTION,
    python_package="reference_backend",
    version=__version__,
    make_partitioners=lambda: [ReferencePartitioner([blob_format_spec(*BLOB_FORMAT)])],
    supported_ops=frozenset(SUPPORTED_OPS),
    sample_models=(
        SampleModel("elementwise", lambda: (_Elementwise(), (torch.randn(3, 8), torch.randn(3, 8)))),
    ),
    load_runtime=load_runtime,
    runtime_libraries=lambda: [library_path()],
)

NARROWED = dataclasses.replace(DESCRIPTOR, supported_ops=DESCRIPTOR.supported_ops - {"aten::sub.Tensor"})
