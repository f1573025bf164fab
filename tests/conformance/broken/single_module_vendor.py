"""A vendor that is one module, not a package, and imports a private module by name."""

import importlib

_program = importlib.import_module("executorch.exir._serialize._program")
