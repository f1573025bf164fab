"""ExecuTorch's XNNPACK backend behind the contract header: a conformance
adapter built on the kit (docs/out-of-tree-guide.md, "Adopting the contract").

    program = to_edge_transform_and_lower(exported, partitioner=[xnnpack_adapter.XnnpackAdapterPartitioner()])
    xnnpack_adapter.load_runtime()  # registers XnnpackAdapterBackend, which runs XNNPACK's blobs

XNNPACK is composed, never subclassed (ExecuTorch refuses a subclass of a
BackendDetails subclass): its partitioner decides, its preprocess writes the
payload, its registered runtime runs it.
"""

from __future__ import annotations

from pathlib import Path

from executorch.backends.xnnpack import XnnpackBackend, XnnpackPartitioner
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult

from backend_kit.adapter import AdapterPartitioner, preprocess_wrapped
from backend_kit.aot import BlobWriter
from backend_kit.runtime import RuntimeLibrary
from xnnpack_adapter.version import BACKEND_ID, BLOB_FORMAT, DISTRIBUTION, WRAPPED_ID, __version__

WRITER = BlobWriter(BACKEND_ID, blob_format=BLOB_FORMAT, version=__version__)
RUNTIME = RuntimeLibrary(
    BACKEND_ID,
    Path(__file__).resolve().parent / "lib" / "libxnnpack_adapter_runtime.so",
    distribution=DISTRIBUTION,
)
load_runtime = RUNTIME.load


class XnnpackAdapterBackend(BackendDetails):
    """XNNPACK's preprocess; its blob goes behind the contract header, its named data (the weights) as it is."""

    @staticmethod
    def preprocess(edge_program, compile_specs) -> PreprocessResult:
        return preprocess_wrapped(XnnpackBackend, WRITER, edge_program, compile_specs)


def XnnpackAdapterPartitioner(*args, **kwargs) -> AdapterPartitioner:
    """XnnpackPartitioner(*args, **kwargs), delegating to the adapter with XNNPACK's compile specs."""
    return AdapterPartitioner(XnnpackPartitioner(*args, **kwargs), WRAPPED_ID, BACKEND_ID)


__all__ = [
    "BACKEND_ID",
    "RUNTIME",
    "WRITER",
    "XnnpackAdapterBackend",
    "XnnpackAdapterPartitioner",
    "__version__",
    "load_runtime",
]
