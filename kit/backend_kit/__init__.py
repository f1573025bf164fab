"""executorch-backend-kit: the generic parts of an out-of-tree ExecuTorch backend.

- :mod:`backend_kit.header`: the contract blob header ("ECVH") and the
  runtime's verdict on a blob;
- :mod:`backend_kit.runtime`: loads a backend's runtime library into the
  ExecuTorch Python runtime, with the build-info check, and confirms the
  registration;
- ``include/backend_kit/header.h`` (C++17, standard library only) and
  ``include/backend_kit/register.h`` (registration, needs ExecuTorch);
- ``cmake/``: the CMake package ``BackendKit`` with ``backend_kit_add_backend()``.

Importing this package needs only the standard library and ``packaging``.
"""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"

_HERE = Path(__file__).resolve().parent


def cmake_dir() -> Path:
    """The directory holding BackendKitConfig.cmake (pass it as -DBackendKit_DIR=...)."""
    return _HERE / "cmake"


def include_dir() -> Path:
    """The directory to add to the include path for <backend_kit/header.h>."""
    return _HERE / "include"
