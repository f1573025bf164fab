"""executorch-conformance: the conformance suite for out-of-tree ExecuTorch backends.

A vendor describes their backend with a ``BackendDescriptor`` and runs
``executorch-conformance run --backend ...``; each check cites a clause of
docs/contract.md.
"""

from conformance.version import SUITE_VERSION as __version__

__all__ = ["__version__"]
