"""A golden vendor descriptor of suite 0.5.0 whose claim suite 0.6.0 carries over (docs/api-stability.md,
"A claim carries over"): a broken backend of tests/conformance/broken as a vendor described it for 0.5.0,
the reference descriptor of 0.4.0 (which 0.5.0 reads unchanged) with the backend's own id and runtime
library. It registers a second id besides its own: suite 0.5.0 passed its RT-6, 0.6.0 made RT-6 stricter.
``claims/EXTRA_ID.json`` is the certify report suite 0.5.0 wrote of it (not conformant for other reasons
of a test backend: its blobs name reference backend 0.4.0, its library sits outside the environment), made
with ``BROKEN_RUNTIME_DIR=... python tests/api/golden/record.py --commit 5c0dcdf --path
tests/conformance/broken --keep-reports tests/api/golden/suite_0_5_0/claims suite_0_5_0.claims:EXTRA_ID``.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
from pathlib import Path

import broken_backends.backends  # noqa: F401  (the BackendDetails of the id)
from reference_backend.partitioner import ReferencePartitioner
from suite_0_4_0.reference import DESCRIPTOR as REFERENCE_0_4_0


def _library(name: str) -> Path:
    return Path(os.environ["BROKEN_RUNTIME_DIR"]) / name


def _broken(backend_id: str, library: str):
    partitioner = type(f"{backend_id}Partitioner", (ReferencePartitioner,), {"backend_id": backend_id})

    def load():
        import executorch.runtime  # noqa: F401  (the runtime the library binds to)

        ctypes.CDLL(str(_library(library)), mode=ctypes.RTLD_GLOBAL)
        return _library(library)

    return dataclasses.replace(
        REFERENCE_0_4_0,
        backend_id=backend_id,
        version="0.1.0",  # what tests/conformance/broken/runtime builds into the runtime's messages
        make_partitioners=lambda: [partitioner()],
        load_runtime=load,
        runtime_libraries=lambda: [_library(library)],
        acceptance=None,  # the reference rules name ReferenceBackend
    )


EXTRA_ID = _broken("ExtraIdBackend", "libextra_id_backend.so")
