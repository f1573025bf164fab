"""An ExecuTorch backend (delegate) built on the contract kit.

    import template_backend
    program = to_edge_transform_and_lower(exported, partitioner=[template_backend.TemplateBackendPartitioner()])
    template_backend.load_runtime()  # then executorch.runtime runs the program

Importing this package defines the backend id (``TemplateBackend``), which
lowering looks up.
"""

from template_backend.backend import TemplateBackend
from template_backend.partitioner import TemplateBackendPartitioner
from template_backend.runtime import RUNTIME
from template_backend.version import BACKEND_ID, __version__

load_runtime = RUNTIME.load

__all__ = [
    "BACKEND_ID",
    "RUNTIME",
    "TemplateBackend",
    "TemplateBackendPartitioner",
    "__version__",
    "load_runtime",
]
