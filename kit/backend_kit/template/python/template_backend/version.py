"""The backend's identity, stated once: the Python side imports it, the package
metadata (pyproject.toml) reads ``__version__``, and the C++ build generates
backend_identity.h from these values (the kit's backend_kit.identity, called by
runtime/CMakeLists.txt). Assign literals only: the build reads them without
importing the package."""

__version__ = "0.1.0"

#: The id stored in every .pte: the name of the BackendDetails subclass (backend.py). Never change it.
BACKEND_ID = "TemplateBackend"

#: The distribution name, as users install it and as the runtime's messages name it.
DISTRIBUTION = "template-backend"

#: (major, minor) of the payload format preprocess() writes; the runtime reads major.0 to this minor.
BLOB_FORMAT = (1, 0)
