"""Loads the C++ runtime library into this process's ExecuTorch runtime,
through the contract kit's loader (backend_kit.runtime: the build-info check,
failing closed, and the registration check), and asks it for verdicts.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
from pathlib import Path

from backend_kit import runtime as kit
from backend_kit.header import VERDICTS
from backend_kit.runtime import RuntimeLoadError, build_info
from reference_backend.version import DISTRIBUTION

BACKEND_ID = "ReferenceBackend"
LIBRARY_NAME = "libreference_backend_runtime.so"
_LIB_DIR = Path(__file__).resolve().parent / "lib"
#: What to do about a library that does not fit (named in every refusal).
FIX = f"reinstall {DISTRIBUTION} in this environment (pip install --force-reinstall --no-build-isolation ./reference_backend)"

__all__ = [
    "BACKEND_ID",
    "Judgement",
    "RuntimeLoadError",
    "build_info",
    "check_executorch_match",
    "judge_blob",
    "library_path",
    "load_runtime",
    "max_compute_steps",
    "max_memory_bytes",
    "runtime_info",
    "set_max_compute_steps",
    "set_max_memory_bytes",
]


@dataclasses.dataclass(frozen=True)
class Judgement:
    """The runtime's verdict on one blob, as its init() would decide."""

    verdict: str  # one of backend_kit.header.VERDICTS
    message: str  # the one-line log message; empty when compatible
    fields: dict[str, str]  # decoded header fields, when the header is readable

    @property
    def runnable(self) -> bool:
        return self.verdict in VERDICTS[:2]


#: Environment variable naming another build of the library to load (for
#: example the sanitizer build that scripts/sanitize.sh makes).
LIBRARY_ENV = "REFERENCE_BACKEND_LIBRARY"


def library_path() -> Path:
    """Where the runtime library is: $REFERENCE_BACKEND_LIBRARY, else the installed one."""
    override = os.environ.get(LIBRARY_ENV)
    return Path(override) if override else _LIB_DIR / LIBRARY_NAME


def check_executorch_match(built: str, running: str) -> None:
    """Refuses a library built for another ExecuTorch minor release (or with an unreadable version)."""
    kit.check_executorch_match(built, running, distribution=DISTRIBUTION, fix=FIX)


def load_runtime(path: str | Path | None = None) -> ctypes.CDLL:
    """Loads the runtime library once and checks that the backend registered.

    Returns the library handle. Raises RuntimeLoadError with the reason and
    the fix when the library is missing, was built for another executorch,
    or does not register.
    """
    lib = kit.load_runtime(
        path or library_path(),
        BACKEND_ID,
        distribution=DISTRIBUTION,
        fix=FIX,
        register="reference_backend_register",
    )
    lib.reference_backend_register.restype = ctypes.c_int
    lib.reference_backend_runtime_info.restype = ctypes.c_char_p
    lib.reference_backend_judge_blob.restype = ctypes.c_int
    lib.reference_backend_judge_blob.argtypes = [
        ctypes.c_char_p,
        ctypes.c_size_t,
        ctypes.c_char_p,
        ctypes.c_size_t,
    ]
    lib.reference_backend_set_max_memory_bytes.restype = ctypes.c_int
    lib.reference_backend_set_max_memory_bytes.argtypes = [ctypes.c_uint64]
    lib.reference_backend_max_memory_bytes.restype = ctypes.c_uint64
    lib.reference_backend_max_memory_bytes.argtypes = []
    lib.reference_backend_set_max_compute_steps.restype = ctypes.c_int
    lib.reference_backend_set_max_compute_steps.argtypes = [ctypes.c_uint64]
    lib.reference_backend_max_compute_steps.restype = ctypes.c_uint64
    lib.reference_backend_max_compute_steps.argtypes = []
    return lib


#: Environment variable with the most bytes the runtime allocates for one blob (default 2 GiB).
MAX_MEMORY_ENV = "REFERENCE_BACKEND_MAX_MEMORY_BYTES"


def set_max_memory_bytes(limit: int) -> None:
    """Sets the most bytes the runtime's init() allocates for one blob (the
    copied constants and its intermediate buffers); a blob needing more is
    refused before anything is allocated. Overrides $REFERENCE_BACKEND_MAX_MEMORY_BYTES."""
    if not 0 < int(limit) < 1 << 64:
        raise ValueError(f"the memory maximum must be 1 to 2^64-1 bytes, got {limit}")
    load_runtime().reference_backend_set_max_memory_bytes(int(limit))


def max_memory_bytes() -> int:
    """The maximum in force: the value set, else the environment's, else 2 GiB."""
    return int(load_runtime().reference_backend_max_memory_bytes())


#: Environment variable with the most compute steps one execute() of a blob may take (default 10^10).
MAX_COMPUTE_ENV = "REFERENCE_BACKEND_MAX_COMPUTE_STEPS"


def set_max_compute_steps(limit: int) -> None:
    """Sets the most compute steps one execute() of a blob may take, as the
    runtime's init() estimates them from the blob's shapes (one step per
    innermost kernel iteration or element touched); a blob estimated above it
    is refused at init. Overrides $REFERENCE_BACKEND_MAX_COMPUTE_STEPS."""
    if not 0 < int(limit) < 1 << 64:
        raise ValueError(f"the compute maximum must be 1 to 2^64-1 steps, got {limit}")
    load_runtime().reference_backend_set_max_compute_steps(int(limit))


def max_compute_steps() -> int:
    """The compute maximum in force: the value set, else the environment's, else 10^10."""
    return int(load_runtime().reference_backend_max_compute_steps())


def _parse_lines(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def runtime_info() -> dict[str, str]:
    """The loaded runtime's backend id, versions and the blob formats it reads."""
    return _parse_lines(load_runtime().reference_backend_runtime_info().decode())


def judge_blob(blob: bytes) -> Judgement:
    """Asks the loaded runtime whether it would run ``blob``, and why not."""
    lib = load_runtime()
    report = ctypes.create_string_buffer(4096)
    code = lib.reference_backend_judge_blob(bytes(blob), len(blob), report, len(report))
    fields = _parse_lines(report.value.decode("utf-8", "replace"))
    message = fields.pop("message", "")
    fields.pop("verdict", None)
    return Judgement(verdict=VERDICTS[code], message=message, fields=fields)
