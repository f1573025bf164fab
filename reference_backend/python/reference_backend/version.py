"""Versions of the reference backend. The C++ build reads ``__version__``
from this file; the blob format constants must equal those in
``runtime/include/reference_backend/versions.h`` (a test compares them)."""

__version__ = "0.4.0"

#: Distribution name, as in the runtime's messages ("re-export with ...>=X").
DISTRIBUTION = "executorch-reference-backend"

#: Blob format written by default: (major, minor). 1.1 added the alpha scalar
#: of add/sub to every op record; 1.0 blobs (alpha implied 1) still run.
#: 1.2 added the named-data table (constants read from ExecuTorch named data,
#: in the .pte or an external .ptd); 1.0 and 1.1 blobs still run.
#: 1.3 added int8/int32 values, op parameters (quantized ops with fixed-point
#: requantization, conv2d) and dynamic dimensions bounded above
#: (docs/quantization.md); 1.0 to 1.2 blobs still run.
#: 1.4 added opcodes 13-22, float32 div, sigmoid, tanh, clamp/hardtanh, max_pool2d, avg_pool2d, softmax,
#: mean, permute and view (same layout as 1.3); 1.0 to 1.3 blobs still run.
BLOB_FORMAT = (1, 4)

#: First minor whose payload has the named-data table.
NAMED_DATA_MINOR = 2

#: First minor with int8/int32 values, the op parameter table and dynamic dimensions.
QUANT_MINOR = 3

#: First minor with the float32 operators of opcodes 13 to 22 (reference_backend.float_ops).
FLOAT_OPS_MINOR = 4

#: Oldest blob format minor the runtime still reads (same major).
BLOB_FORMAT_MINOR_MIN = 0
