"""The conformance runner as a library in the vendor process: a bundle's entries run through ExecuTorch's
C++ Module API in the process whose runtime already has the vendor's backend and the CPU kernels
registered, on threads of the runner's own (the Python binding holds the GIL while it executes, so Python
threads never execute two methods at once; ``ctypes`` releases it for the call).

``library()`` builds ``conformance/device_runner`` with ``-DRUNNER_IN_PROCESS=ON`` against the executorch
this process imported, once per (sources, executorch installation, compiler), into the suite's cache
directory (``lowering_cache.default_dir()``); a build that fails raises ``RunnerLibraryError`` naming the
tool and its last lines. ``run_bundle()`` runs a bundle written with ``conformance.targets.bundle``.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from conformance.device_runner import SOURCES
from conformance.vendor.lowering_cache import DIR_ENV, default_dir

#: The library's file name (OUTPUT_NAME in CMakeLists.txt).
LIBRARY = "libconformance_runner.so"
#: How long configuring and building may take (a cold build on 2 cores takes about 10 s).
BUILD_TIMEOUT_S = 600
_ERROR_BYTES = 4096


class RunnerLibraryError(RuntimeError):
    """The runner library cannot be built or loaded here; the message names the tool and what it said."""


def _executorch_dir() -> Path:
    import executorch.runtime

    return Path(executorch.runtime.__file__).resolve().parent.parent


def _tool(name: str, given: str | None) -> str | None:
    """``given`` if set, else ``name`` next to this interpreter, else on PATH."""
    if given:
        return given
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def _key(executorch_dir: Path, compiler: str) -> str:
    digest = hashlib.sha256()
    for path in sorted(SOURCES.rglob("*")):
        if path.is_file() and path.suffix in (".cpp", ".h", ".txt"):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    runtime = executorch_dir / "lib" / "libexecutorch.so"
    stat = runtime.stat() if runtime.exists() else None
    digest.update(f"{executorch_dir}\0{stat and (stat.st_size, stat.st_mtime_ns)}\0{compiler}".encode())
    return digest.hexdigest()[:20]


def _run(argv: list[str], what: str) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise RunnerLibraryError(f"{what}: {argv[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise RunnerLibraryError(f"{what} took more than {BUILD_TIMEOUT_S} s") from None
    if done.returncode != 0:
        tail = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()][-12:]
        raise RunnerLibraryError(
            f"{what} failed with exit status {done.returncode}:\n" + "\n".join(f"    {line}" for line in tail)
        )


def library(cmake: str | None = None, ninja: str | None = None) -> Path:
    """The path of the runner library built against this process's executorch (built on first use)."""
    cmake_path, ninja_path = _tool("cmake", cmake), _tool("ninja", ninja)
    if cmake_path is None:
        raise RunnerLibraryError("building the runner library needs cmake (3.28 or newer): pip install cmake")
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if compiler is None:
        raise RunnerLibraryError(
            "building the runner library needs a C++17 compiler: none found (set CXX, or install g++ or clang++)"
        )
    executorch_dir = _executorch_dir()
    out = default_dir() / f"runner-library-{_key(executorch_dir, compiler)}"
    built = out / LIBRARY
    if built.exists():
        return built
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return _build(cmake_path, ninja_path, compiler, executorch_dir, out)
    except OSError as exc:
        raise RunnerLibraryError(
            f"cannot build the runner library in {out.parent}: {exc}; set {DIR_ENV} to a writable directory"
        ) from None


def _build(cmake_path: str, ninja_path: str | None, compiler: str, executorch_dir: Path, out: Path) -> Path:
    built = out / LIBRARY
    with tempfile.TemporaryDirectory(prefix="runner-library-", dir=out.parent) as tmp:
        build = Path(tmp) / "build"
        configure = [cmake_path, "-S", str(SOURCES), "-B", str(build), "-DRUNNER_IN_PROCESS=ON"]
        configure += ["-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={executorch_dir}"]
        configure += [f"-DCMAKE_CXX_COMPILER={compiler}"]
        if ninja_path:
            configure += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja_path}"]
        what = f"building the runner library against executorch at {executorch_dir}"
        _run(configure, what + " (configuring)")
        _run([cmake_path, "--build", str(build)], what)
        staged = Path(tmp) / "staged"
        staged.mkdir()
        shutil.copy2(build / LIBRARY, staged / LIBRARY)
        try:
            os.replace(staged, out)  # atomic: another process building the same key wins or loses whole
        except OSError:
            if not built.exists():
                raise
    return built


def run_bundle(path: Path, bundle: Path) -> None:
    """Runs the bundle in ``bundle`` with the library at ``path``; RunnerLibraryError if the library does not
    load or the bundle is malformed (a runtime error is a result in ``bundle/results``, not an exception)."""
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as exc:
        raise RunnerLibraryError(f"the runner library {path} does not load: {exc}") from None
    run = lib.conformance_runner_run_bundle
    run.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    run.restype = ctypes.c_int
    error = ctypes.create_string_buffer(_ERROR_BYTES)
    code = run(str(bundle).encode(), error, _ERROR_BYTES)
    if code != 0:
        raise RunnerLibraryError(
            f"the runner library refused the bundle (exit code {code}): {error.value.decode(errors='replace')}"
        )
