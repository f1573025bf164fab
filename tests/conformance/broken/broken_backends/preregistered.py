"""A descriptor module that loads the reference runtime when it is imported: the backend is
registered before load_runtime() runs, so nothing shows that load_runtime() registers it (RT-1)."""

from reference_backend.conformance import DESCRIPTOR as REFERENCE
from reference_backend.runtime import load_runtime

load_runtime()
DESCRIPTOR = REFERENCE
