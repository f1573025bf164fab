"""The descriptor the conformance suite reads (entry point
``executorch_conformance.backends``):

    executorch-conformance run --backend TemplateBackend --certify

Imported only by the suite, so the backend does not depend on it.
"""

from __future__ import annotations

import torch

from conformance.descriptor import BackendDescriptor, SampleModel
from conformance.operators import OperatorSupport
from template_backend import RUNTIME, TemplateBackendPartitioner
from template_backend.ops import OPS
from template_backend.version import BACKEND_ID, DISTRIBUTION, __version__


class _NegAbs(torch.nn.Module):
    def forward(self, x):
        return torch.abs(torch.neg(x) * 2.0)  # the mul stays on ExecuTorch's CPU kernels


DESCRIPTOR = BackendDescriptor(
    backend_id=BACKEND_ID,
    distribution=DISTRIBUTION,
    python_package="template_backend",
    version=__version__,
    make_partitioners=lambda: [TemplateBackendPartitioner()],
    operators=OperatorSupport.float32(*OPS),
    sample_models=(SampleModel("neg_abs", lambda: (_NegAbs(), (torch.randn(3, 5),))),),
    load_runtime=RUNTIME.load,
    runtime_libraries=RUNTIME.libraries,
)
