"""The backend's identity: one place for the Python side, the C++ build
(runtime/CMakeLists.txt reads ``__version__``) and the package metadata
(pyproject.toml reads it too)."""

__version__ = "0.1.0"

#: The id stored in every .pte: the name of the BackendDetails subclass (backend.py). Never change it.
BACKEND_ID = "TemplateBackend"

#: The distribution name, as users install it and as the runtime's messages name it.
DISTRIBUTION = "template-backend"

#: (major, minor) of the payload format preprocess() writes; runtime/backend.cpp reads the same.
BLOB_FORMAT = (1, 0)
