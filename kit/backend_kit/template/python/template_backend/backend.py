"""The preprocess step: one delegated operator -> the contract header and the
payload. The class name is the backend id (ExecuTorch finds the class by it).

Payload, blob format 1.0 (little-endian): u32 opcode (ops.OPS), u64 number
of float32 elements.
"""

from __future__ import annotations

import struct

from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult

from backend_kit.aot import BlobWriter, schema_name
from template_backend.ops import OPS
from template_backend.version import BACKEND_ID, BLOB_FORMAT, __version__

WRITER = BlobWriter(BACKEND_ID, blob_format=BLOB_FORMAT, version=__version__)


class TemplateBackend(BackendDetails):
    @staticmethod
    def preprocess(edge_program, compile_specs) -> PreprocessResult:
        (node,) = [n for n in edge_program.graph.nodes if n.op == "call_function"]
        payload = struct.pack("<IQ", OPS[schema_name(node.target)], node.meta["val"].numel())
        return PreprocessResult(processed_bytes=WRITER.blob(payload))
