"""executorch-reference-backend: a complete out-of-tree ExecuTorch backend.

Importing this package makes ``ReferenceBackend`` known to ExecuTorch's
lowering (its ``BackendDetails`` subclass is looked up by class name).
``load_runtime()`` loads the C++ runtime into this process's ExecuTorch.
"""

# The contract header is the kit's (backend_kit.header), under this package's
# historical names.
from backend_kit.header import Header as BlobHeader
from backend_kit.header import HeaderError as BlobHeaderError
from backend_kit.header import decode as decode_header
from backend_kit.header import encode as encode_blob
from reference_backend.backend import ReferenceBackend
from reference_backend.compile_specs import blob_format_spec, named_data_specs
from reference_backend.diagnostics import (
    ProgramCompatibilityError,
    ReexportRecommendedWarning,
    check_program,
    inspect_program,
    load_method,
)
from reference_backend.partitioner import ReferencePartitioner
from reference_backend.runtime import (
    RuntimeLoadError,
    judge_blob,
    load_runtime,
    max_compute_steps,
    max_memory_bytes,
    runtime_info,
    set_max_compute_steps,
    set_max_memory_bytes,
)
from reference_backend.version import BLOB_FORMAT, __version__

__all__ = [
    "BLOB_FORMAT",
    "BlobHeader",
    "BlobHeaderError",
    "ProgramCompatibilityError",
    "ReexportRecommendedWarning",
    "ReferenceBackend",
    "ReferencePartitioner",
    "RuntimeLoadError",
    "__version__",
    "blob_format_spec",
    "check_program",
    "decode_header",
    "encode_blob",
    "inspect_program",
    "judge_blob",
    "load_method",
    "load_runtime",
    "max_compute_steps",
    "max_memory_bytes",
    "named_data_specs",
    "runtime_info",
    "set_max_compute_steps",
    "set_max_memory_bytes",
]
