"""Compile specs understood by the reference backend's preprocess."""

from __future__ import annotations

from executorch.exir.backend.compile_spec_schema import CompileSpec

from reference_backend.version import BLOB_FORMAT, BLOB_FORMAT_MINOR_MIN

#: Blob format to write, as b"MAJOR.MINOR": lets a vendor target an older
#: runtime that reads only an older minor (default: the newest, BLOB_FORMAT).
BLOB_FORMAT_KEY = "blob_format"


class CompileSpecError(ValueError):
    """A compile spec has an unknown key or an unusable value."""


def blob_format_spec(major: int, minor: int) -> CompileSpec:
    """A compile spec that asks preprocess for blob format ``major.minor``."""
    return CompileSpec(BLOB_FORMAT_KEY, f"{major}.{minor}".encode())


def requested_blob_format(compile_specs: list[CompileSpec]) -> tuple[int, int]:
    """The blob format the specs ask for, checked against what can be written."""
    wanted = BLOB_FORMAT
    for spec in compile_specs:
        if spec.key != BLOB_FORMAT_KEY:
            raise CompileSpecError(
                f"unknown compile spec {spec.key!r}; the reference backend knows {BLOB_FORMAT_KEY!r}"
            )
        try:
            major, minor = (int(p) for p in bytes(spec.value).decode().split("."))
        except ValueError:
            raise CompileSpecError(
                f"compile spec {BLOB_FORMAT_KEY!r} must be b'MAJOR.MINOR', got {bytes(spec.value)!r}"
            ) from None
        wanted = (major, minor)
    if wanted[0] != BLOB_FORMAT[0] or not BLOB_FORMAT_MINOR_MIN <= wanted[1] <= BLOB_FORMAT[1]:
        raise CompileSpecError(
            f"blob format {wanted[0]}.{wanted[1]} cannot be written; this exporter writes "
            f"{BLOB_FORMAT[0]}.{BLOB_FORMAT_MINOR_MIN} to {BLOB_FORMAT[0]}.{BLOB_FORMAT[1]}"
        )
    return wanted
