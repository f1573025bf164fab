"""Loads the C++ runtime library into this process's ExecuTorch runtime.

The library links ``libexecutorch.so`` from the executorch wheel; loaded with
RTLD_GLOBAL after ``executorch.runtime`` it binds to the runtime already in
the process, and its static initializer registers "ReferenceBackend" in the
registry that ``executorch.runtime.Runtime`` uses.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import threading
from pathlib import Path

from packaging.version import Version

from reference_backend.version import DISTRIBUTION

BACKEND_ID = "ReferenceBackend"
LIBRARY_NAME = "libreference_backend_runtime.so"
_LIB_DIR = Path(__file__).resolve().parent / "lib"
_lock = threading.Lock()
_loaded: ctypes.CDLL | None = None

VERDICTS = ("compatible", "compatible, re-export recommended", "incompatible", "invalid")


class RuntimeLoadError(RuntimeError):
    """The runtime library is missing, or does not fit the installed executorch."""


@dataclasses.dataclass(frozen=True)
class Judgement:
    """The runtime's verdict on one blob, as its init() would decide."""

    verdict: str  # one of VERDICTS
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


def build_info(path: Path | None = None) -> dict:
    """What the library was built with (written by CMake next to it)."""
    info = (path or library_path()).parent / "build_info.json"
    try:
        return json.loads(info.read_text())
    except FileNotFoundError:
        raise RuntimeLoadError(
            f"{info} is missing: the {DISTRIBUTION} runtime was not built. Install the "
            f"package with pip (pip install --no-build-isolation ./reference_backend)."
        ) from None


def check_executorch_match(built: str, running: str) -> None:
    """Refuses a library built for another ExecuTorch minor release.

    The C++ ABI is not promised stable across minor releases (docs/version-policy.md);
    within one minor, 1.5.0 and 1.5.1 were measured compatible both ways (abi_checks/).
    """
    b, r = Version(built), Version(running)
    if b.release[:2] != r.release[:2]:
        raise RuntimeLoadError(
            f"{DISTRIBUTION}'s runtime library was built against executorch {built}, but this "
            f"process runs executorch {running}; a backend library must be built for the same "
            f"executorch minor release. Fix: reinstall {DISTRIBUTION} in this environment "
            f"(pip install --force-reinstall --no-build-isolation ./reference_backend)."
        )


def load_runtime(path: str | Path | None = None) -> ctypes.CDLL:
    """Loads the runtime library once and checks that the backend registered.

    Returns the library handle. Raises RuntimeLoadError with the reason and
    the fix when the library is missing, was built for another executorch,
    or does not register.
    """
    global _loaded
    with _lock:
        if _loaded is not None and path is None:
            return _loaded
        import executorch.runtime
        from executorch.version import __version__ as running

        lib_path = Path(path) if path else library_path()
        if not lib_path.exists():
            raise RuntimeLoadError(f"runtime library {lib_path} does not exist")
        check_executorch_match(build_info(lib_path)["executorch_version"], running)
        lib = ctypes.CDLL(str(lib_path), mode=ctypes.RTLD_GLOBAL)
        lib.reference_backend_register.restype = ctypes.c_int
        lib.reference_backend_runtime_info.restype = ctypes.c_char_p
        lib.reference_backend_judge_blob.restype = ctypes.c_int
        lib.reference_backend_judge_blob.argtypes = [
            ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t,
        ]
        code = lib.reference_backend_register()
        names = executorch.runtime.Runtime.get().backend_registry.registered_backend_names
        if code != 0 or BACKEND_ID not in names:
            raise RuntimeLoadError(
                f"{lib_path} loaded but {BACKEND_ID} is not registered (error 0x{code:x}); "
                f"registered backends: {names}"
            )
        if path is None:
            _loaded = lib
        return lib


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
