"""executorch-backend-kit: the generic parts of an out-of-tree ExecuTorch backend.

- :mod:`backend_kit.header`: the contract blob header ("ECVH") and the
  runtime's verdict on a blob;
- :mod:`backend_kit.aot`: ``BlobWriter``, the header a backend's
  ``preprocess()`` writes, with the exporting ExecuTorch's version, and
  ``schema_name``, the operator an FX node calls ("aten::add.Tensor");
- :mod:`backend_kit.runtime`: loads a backend's runtime library into the
  ExecuTorch Python runtime, with the build-info check, and confirms the
  registration (``RuntimeLibrary``: the library of one package);
- :mod:`backend_kit.adapter`: the AOT half of a conformance adapter for a
  backend with a payload format of its own (imports executorch);
- ``include/backend_kit/header.h`` (C++17, standard library only),
  ``include/backend_kit/backend.h`` (init(): the versions of the build,
  ``accept_blob``, logging), ``include/backend_kit/register.h``
  (registration) and ``include/backend_kit/adapter.h`` (the runtime half of
  an adapter), the last three needing ExecuTorch;
- ``cmake/``: the CMake package ``BackendKit`` with ``backend_kit_add_backend()``;
- ``template/``: a complete backend package built on all of the above, which
  ``executorch-conformance new-backend NAME`` renders.

Importing this package needs only the standard library and ``packaging``.
"""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.6"

_HERE = Path(__file__).resolve().parent


def cmake_dir() -> Path:
    """The directory holding BackendKitConfig.cmake (pass it as -DBackendKit_DIR=...)."""
    return _HERE / "cmake"


def include_dir() -> Path:
    """The directory to add to the include path for <backend_kit/header.h>."""
    return _HERE / "include"


def template_dir() -> Path:
    """The backend package template (named TemplateBackend at rest)."""
    return _HERE / "template"
