"""A vendor package that reaches private ExecuTorch modules through strings only: no import
statement names them, so a scan of import statements passes it (PKG-2 must not)."""

import importlib
import importlib.util
import sys

from reference_backend import ReferencePartitioner  # noqa: F401

_PYBINDINGS = "executorch.extension.pybindings"
_RUNTIME_MODULE = _PYBINDINGS + "._portable_lib"


def runtime_module():
    """The runtime extension, whichever way it was loaded."""
    loaded = sys.modules.get(_RUNTIME_MODULE)
    return loaded if loaded is not None else importlib.import_module(_RUNTIME_MODULE)


def serializer_available() -> bool:
    return importlib.util.find_spec("executorch.exir._serialize._program") is not None


def registry():
    return sys.modules["executorch.extension.pybindings._portable_lib"]
