"""The AOT half of the backend: ``ReferenceBackend.preprocess``.

The class name is the backend id stored in the .pte and looked up in the
runtime's registry, so it must never change (contract clause C-AOT-2).
"""

from __future__ import annotations

from packaging.version import Version
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.version import __version__ as executorch_version
from torch.export import ExportedProgram

from reference_backend.blob_header import BlobHeader, encode_blob
from reference_backend.compile_specs import requested_blob_format
from reference_backend.serialize import serialize_program
from reference_backend.version import __version__


def version_triple(text: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a version such as "1.5.1+cpu" or "1.6.0.dev20261101".

    Python distributions are versioned by PEP 440, not SemVer (a nightly
    "1.6.0.dev…" is not valid SemVer), so ``packaging`` parses them.
    """
    release = Version(text).release + (0, 0)
    return (release[0], release[1], release[2])


def build_blob(edge_program: ExportedProgram, compile_specs: list[CompileSpec], backend_id: str) -> bytes:
    """Contract header + graph payload for the delegated subgraph ``edge_program``."""
    major, minor = requested_blob_format(compile_specs)
    payload = serialize_program(edge_program, minor)
    header = BlobHeader(
        backend_id=backend_id,
        blob_format=(major, minor),
        backend_version=version_triple(__version__),
        executorch_version=version_triple(executorch_version),
    )
    return encode_blob(header, payload)


class ReferenceBackend(BackendDetails):
    """Turns a delegated subgraph into a blob: contract header + graph payload."""

    @staticmethod
    def preprocess(edge_program: ExportedProgram, compile_specs: list[CompileSpec]) -> PreprocessResult:
        return PreprocessResult(processed_bytes=build_blob(edge_program, compile_specs, ReferenceBackend.__name__))
