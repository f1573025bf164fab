"""The contract's checks, one module per area (IDs AOT-, BLOB-, SER-, RT-, PKG-, NDATA-)."""

from conformance.checks import aot, blob, named_data, packaging, runtime, serialization  # noqa: F401
