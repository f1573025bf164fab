"""Builds (or finds) the reference backend's runtime library for the installed
executorch release, so that it joins that wheel's backend registry.

``build_runtime(version, build, headers_from)`` returns (library, how) or
(None, why not). 1.5.x: the installed reference backend wheel, or a CMake
build against the wheel's CMake package. Earlier: a CMake build against the
wheel's include/ (or, where the wheel has none, ``headers_from``'s, see
matrix/headers.py), linked to the library of the wheel that exports
``register_backend`` (``registry_library``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from packaging.version import Version

from conformance.version_numbers import installed_version

REPO = Path(__file__).resolve().parent.parent
REGISTRY_LIBRARY = "backends/qualcomm/libqnn_executorch_backend.so"


def executorch_root() -> Path:
    import executorch

    return Path(next(iter(executorch.__path__)))


def required(dist: str) -> str:
    """The installed version of ``dist``; exits with a one-line error when it is not installed."""
    version = installed_version(dist)
    if version is None:
        raise SystemExit(
            f"{dist} is not installed in {sys.prefix}: run this inside a matrix environment (tox -e et151)"
        )
    return version


def tool(name: str) -> str:
    """This environment's ``name`` (cmake, ninja), else the one on PATH."""
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else (shutil.which(name) or name)


def registry_library(root: Path) -> Path | None:
    """The library of this wheel that exports ``register_backend`` (measured per release: ``runtime_library``
    in abi_checks/baselines/<release>.json)."""
    candidates = [
        root / REGISTRY_LIBRARY,
        *sorted((root / "extension" / "pybindings").glob("_portable_lib*.so")),
    ]
    for path in candidates:
        if path.is_file() and exports(path, "register_backend"):
            return path
    return None


def exports(path: Path, name: str) -> bool:
    """Whether the shared library ``path`` defines a dynamic symbol whose demangled name contains ``name``."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    with path.open("rb") as f:
        for section in ELFFile(f).iter_sections():
            if isinstance(section, SymbolTableSection) and section.name == ".dynsym":
                for sym in section.iter_symbols():
                    if sym["st_shndx"] != "SHN_UNDEF" and f"{len(name)}{name}" in sym.name:
                        return True
    return False


def build_runtime(version: str, build: Path, headers_from: str | None = None) -> tuple[Path | None, str]:
    """(library, how) for this release, or (None, why not).

    ``headers_from``: for a wheel without headers, build against that later
    release's headers (matrix/headers.py) and link this wheel's registry.
    """
    root = executorch_root()
    if Version(version) >= Version("1.5"):
        if installed_version("executorch-reference-backend"):
            from reference_backend.runtime import library_path

            return library_path(), "the installed executorch-reference-backend wheel"
        defines = [f"-DCMAKE_PREFIX_PATH={root}", f"-Dexecutorch_DIR={root / 'lib' / 'cmake' / 'executorch'}"]
        how = "built with CMake against the wheel's executorch package"
    else:
        library = registry_library(root)
        include = root / "include"
        whose = "the wheel's include/"
        if not (include / "executorch" / "runtime" / "backend" / "interface.h").exists() and headers_from:
            from matrix.headers import headers_of

            try:
                include = headers_of(headers_from, build.parent / "headers")
            except RuntimeError as exc:
                return None, str(exc)
            whose = f"executorch {headers_from}'s include/ (this wheel ships none)"
        if library is None or not (include / "executorch" / "runtime" / "backend" / "interface.h").exists():
            return None, "no separately built backend library can join this wheel's registry: " + (
                "the wheel ships no runtime/backend headers"
                if library
                else "no library exports register_backend"
            )
        defines = [
            f"-DREFERENCE_BACKEND_EXECUTORCH_LIBRARY={library}",
            f"-DREFERENCE_BACKEND_EXECUTORCH_INCLUDE={include}",
            f"-DREFERENCE_BACKEND_EXECUTORCH_VERSION={version}",
        ]
        how = f"built with CMake against {whose}, linked to {library.relative_to(root)}"
    for cmd in (
        [
            tool("cmake"),
            "-S",
            str(REPO / "reference_backend" / "runtime"),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={tool('ninja')}",
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython_EXECUTABLE={sys.executable}",
            *defines,
        ],
        [tool("cmake"), "--build", str(build)],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
            return None, f"building the runtime library failed: {' / '.join(tail)}"
    return build / "libreference_backend_runtime.so", how
