"""A descriptor module that loads the reference runtime when it is imported and claims that
ExecuTorch's runtime registered it at import: RT-1 must tell the descriptor's import from ExecuTorch's."""

import dataclasses

from reference_backend.conformance import DESCRIPTOR as REFERENCE
from reference_backend.runtime import load_runtime

load_runtime()
DESCRIPTOR = dataclasses.replace(REFERENCE, registered_at_import=True)
