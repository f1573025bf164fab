"""Descriptors whose registration claims are wrong (RT-1, RT-2, C-RT-1).

XNNPACK is registered by ExecuTorch's own Python runtime when executorch.runtime is imported; the
reference backend is registered by its load_runtime()."""

from __future__ import annotations

import dataclasses

from reference_backend.conformance import DESCRIPTOR as REFERENCE
from scoreboard.xnnpack.descriptor import DESCRIPTOR as XNNPACK

#: XNNPACK without the declaration: ExecuTorch registered it before load_runtime() ran
XNNPACK_UNDECLARED = dataclasses.replace(XNNPACK, registered_at_import=False)

#: the reference backend claiming ExecuTorch registers it at import: its load_runtime() does
REFERENCE_CLAIMS_IMPORT = dataclasses.replace(REFERENCE, registered_at_import=True)

#: the reference backend with a load_runtime() that loads nothing: never registered
NEVER_REGISTERED = dataclasses.replace(REFERENCE, load_runtime=lambda: None, runtime_libraries=lambda: ())
