"""The contract blob header (docs/blob-header.md) as the suite reads and
rewrites it: a thin adapter over the contract kit's one implementation
(``backend_kit.header``), under the names the suite has always used.

The kit's decoder is the one whose rules the C++ header (and so the
reference runtime) is proven to share, through the vectors in
``kit/vectors/blob_headers.json``.
"""

from __future__ import annotations

import backend_kit.header as _kit

MAGIC = _kit.MAGIC
FIXED = _kit.FIXED
CHECKSUM_AT = _kit.CHECKSUM_OFFSET

#: The bytes do not start with a valid contract header.
HeaderError = _kit.HeaderError
#: The decoded fields (header_length, header_format_version, blob_format,
#: backend_version, executorch_version, payload_size, checksum, backend_id, ...).
ContractHeader = _kit.Header


def checksum(blob: bytes | memoryview, header_length: int, payload_size: int) -> int:
    """CRC-32 of the header with the checksum field zeroed, then the payload."""
    return _kit.checksum(blob[:header_length], blob[header_length : header_length + payload_size])


def read_header(blob: bytes | memoryview) -> ContractHeader:
    """Parses and validates the header at the start of ``blob``; the blob must
    be exactly header + payload."""
    return _kit.decode(bytes(blob))


def with_blob_format(blob: bytes, major: int, minor: int) -> bytes:
    """``blob`` claiming blob format major.minor, with a valid checksum."""
    read_header(blob)
    return _kit.rewrite(blob, {"blob_format": (major, minor)})
