"""A report's content hash: a SHA-256 over the canonical JSON of the report without its hash field
(``canonical_bytes``, ``content_hash``, ``seal``), the numbers JSON can hold (``json_numbers``), and the
SHA-256 of a file the report names (``file_sha256``). The hash detects edits; it does not prove who ran
the suite (``conformance.certification.attestation`` does)."""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

from conformance.input_files import NotARegularFile, open_regular


def canonical_bytes(report: dict[str, Any]) -> bytes:
    body = {k: v for k, v in report.items() if k != "content_sha256"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def content_hash(report: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_bytes(report)).hexdigest()


def json_numbers(value: Any) -> Any:
    """``value`` with every infinite or NaN float replaced by None: JSON has neither, and ``verify`` reads a
    report as strict JSON. A row that records a non-finite error (an output that is NaN where eager
    PyTorch's is not) says so in its reason."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_numbers(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_numbers(v) for v in value]
    return value


def seal(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with its content_sha256 filled in."""
    sealed = dict(report)
    sealed["content_sha256"] = content_hash(sealed)
    return sealed


#: file_sha256 hashes at most this many bytes (a wheel or runtime library larger than this is refused).
MAX_HASH_BYTES = 4 << 30


def file_sha256(path: str | Path, max_bytes: int = MAX_HASH_BYTES) -> str:
    """The SHA-256 of a regular file of at most ``max_bytes`` (OSError otherwise, naming why)."""
    digest = hashlib.sha256()
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise NotARegularFile(f"{path} is {size} bytes, more than the {max_bytes} this tool hashes")
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
