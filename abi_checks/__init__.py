"""API and ABI surface of each ExecuTorch release, and vendor binaries checked against it.

- ``abi_checks/baselines/<release>.json``: exported C++ symbols of the library that carries the
  backend registry, and the layouts of the backend-facing types (regenerate with
  ``python -m abi_checks.tools.make_baseline RELEASE``).
- ``abi_checks/python_api/<release>.json``: the Python AOT surface, extracted with griffe.
- ``abi_checks/libraries/<release>.json``: every shared library of the release's wheel (SONAME,
  NEEDED, RUNPATH, exported ExecuTorch symbols), what ``abi check`` binds imports against.
- ``executorch-conformance abi diff OLD NEW`` and ``abi check LIB.so --against RELEASE...``.

See abi_checks/README.md.
"""

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
BASELINE_DIR = PACKAGE_DIR / "baselines"
PYTHON_API_DIR = PACKAGE_DIR / "python_api"
LIBRARIES_DIR = PACKAGE_DIR / "libraries"
