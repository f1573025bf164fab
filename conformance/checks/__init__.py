"""The contract's checks, one module per area (IDs AOT-, BLOB-, SER-, RT-, PKG-)."""

from conformance.checks import aot, blob, packaging, runtime, serialization  # noqa: F401
