"""The C++ runtime library (runtime/), installed next to this package and
loaded into ExecuTorch's Python runtime by the kit: the build is checked
against the running executorch first, and the registration after."""

from __future__ import annotations

from pathlib import Path

from backend_kit.runtime import RuntimeLibrary
from template_backend.version import BACKEND_ID, DISTRIBUTION

RUNTIME = RuntimeLibrary(
    BACKEND_ID,
    Path(__file__).resolve().parent / "lib" / "libtemplate_backend_runtime.so",
    distribution=DISTRIBUTION,
    override_env="TEMPLATE_BACKEND_LIBRARY",
)
