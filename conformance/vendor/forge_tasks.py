"""Vendor-process task of RT-5 for a backend with a blob format of its own (``task_registry.INCOMPATIBLE_BLOBS``,
judged by ``conformance.checks.runtime``): the descriptor's ``incompatible_blobs`` hook, called with a blob
the backend wrote, and what it returned checked before the judge relies on it."""

from __future__ import annotations

from typing import Any

from conformance.vendor.bootstrap import descriptor
from conformance.vendor.envelope import VendorError, vendor_call

#: The most incompatible blobs a hook may return (each is loaded once).
MAX_BLOBS = 16


def incompatible_blobs(blob: bytes) -> list[dict[str, Any]]:
    """What ``incompatible_blobs(blob)`` returned, as dicts (label, blob, forged, supported); VendorError
    naming the hook and the value when it returned anything else."""
    hook = descriptor().incompatible_blobs
    made = vendor_call("incompatible_blobs(blob)", lambda: list(hook(bytes(blob))))
    return checked(made, bytes(blob))


def checked(made: list[Any], blob: bytes) -> list[dict[str, Any]]:
    """``made`` (what the hook returned for ``blob``) as dicts; VendorError naming what is wrong."""
    from conformance.descriptor import IncompatibleBlob

    what = "incompatible_blobs(blob)"
    if not made or len(made) > MAX_BLOBS:
        raise VendorError(f"{what} returned {len(made)} blobs: give 1 to {MAX_BLOBS} IncompatibleBlob values")
    out = []
    for i, case in enumerate(made):
        if not isinstance(case, IncompatibleBlob):
            raise VendorError(
                f"{what}[{i}] is a {type(case).__name__}, not a conformance.descriptor.IncompatibleBlob"
            )
        for field in ("label", "forged", "supported"):
            value = getattr(case, field)
            if not isinstance(value, str) or not value.strip():
                raise VendorError(f"{what}[{i}].{field} is {value!r}: give a non-empty string")
        if not isinstance(case.blob, (bytes, bytearray)):
            raise VendorError(
                f"{what}[{i}] ({case.label}): its blob is a {type(case.blob).__name__}, not bytes"
            )
        if bytes(case.blob) == blob:
            raise VendorError(
                f"{what}[{i}] ({case.label}): its blob is the blob it was given: it changed nothing"
            )
        out.append(
            {
                "label": case.label,
                "blob": bytes(case.blob),
                "forged": case.forged,
                "supported": case.supported,
            }
        )
    return out
