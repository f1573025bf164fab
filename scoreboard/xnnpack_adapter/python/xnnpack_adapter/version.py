"""The adapter's identity (runtime/CMakeLists.txt and pyproject.toml read ``__version__``)."""

__version__ = "0.1.0"

#: Its own backend id: a .pte lowered through the adapter names this backend, not XnnpackBackend.
BACKEND_ID = "XnnpackAdapterBackend"
#: The backend whose blobs it carries, by the id ExecuTorch registers it under.
WRAPPED_ID = "XnnpackBackend"
DISTRIBUTION = "executorch-xnnpack-adapter"

#: 1.0: the payload is XNNPACK's own blob (its "XH00" header and flatbuffer), exactly as XNNPACK's
#: preprocess wrote it with the executorch named in the contract header.
BLOB_FORMAT = (1, 0)
