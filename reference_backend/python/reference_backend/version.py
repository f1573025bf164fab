"""Versions of the reference backend. The C++ build reads ``__version__``
from this file; the blob format constants must equal those in
``runtime/include/reference_backend/versions.h`` (a test compares them)."""

__version__ = "0.1.0"

#: Distribution name, as in the runtime's messages ("re-export with ...>=X").
DISTRIBUTION = "executorch-reference-backend"

#: Blob format written by default: (major, minor). 1.1 added the alpha scalar
#: of add/sub to every op record; 1.0 blobs (alpha implied 1) still run.
BLOB_FORMAT = (1, 1)

#: Oldest blob format minor the runtime still reads (same major).
BLOB_FORMAT_MINOR_MIN = 0
