"""Where the executorch wheel keeps its libraries (executorch is a namespace package: no __file__)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path


def executorch_lib(name: str) -> Path:
    """``executorch/lib/NAME`` of the installed executorch wheel."""
    files = importlib.metadata.distribution("executorch").locate_file("executorch")
    return Path(str(files)) / "lib" / name


def executorch_version() -> str:
    """The installed executorch distribution's version (executorch.version says 1.5.1+cpu)."""
    return importlib.metadata.version("executorch")
