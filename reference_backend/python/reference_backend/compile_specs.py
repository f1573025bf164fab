"""Compile specs understood by the reference backend's preprocess.

Every value is ASCII text (CompileSpec values are bytes):

``blob_format``           b"MAJOR.MINOR": the blob format to write (default: the newest).
``named_data_threshold``  b"BYTES": constants of at least this many bytes are stored as
                          ExecuTorch named data instead of inside the blob (default: never).
``named_data_file``       b"TAG": named data goes to the external file TAG.ptd instead of the
                          .pte (default: inside the .pte). Only with named_data_threshold.
``max_memory_bytes``      b"BYTES": the memory limit recorded in the blob's header (the most
                          bytes the runtime may allocate to load and run it); export fails if
                          the blob needs more (default: exactly what it needs).
``header_format``         b"1" or b"2": the contract header format to write (default 2:
                          CRC-32C, memory limit, named-data checksums; 1: for runtimes
                          before header format 2, CRC-32 and neither record).
"""

from __future__ import annotations

import dataclasses
import re

from executorch.exir.backend.compile_spec_schema import CompileSpec

from reference_backend.version import BLOB_FORMAT, BLOB_FORMAT_MINOR_MIN, NAMED_DATA_MINOR

#: Blob format to write, as b"MAJOR.MINOR": lets a vendor target an older
#: runtime that reads only an older minor (default: the newest, BLOB_FORMAT).
BLOB_FORMAT_KEY = "blob_format"
#: Size in bytes (ASCII decimal) from which a constant goes to named data.
NAMED_DATA_THRESHOLD_KEY = "named_data_threshold"
#: File tag of the external data file (ExecuTorch writes TAG.ptd).
NAMED_DATA_FILE_KEY = "named_data_file"
#: The memory limit to record in the header (ASCII decimal bytes).
MAX_MEMORY_KEY = "max_memory_bytes"
#: The contract header format to write: b"1" or b"2".
HEADER_FORMAT_KEY = "header_format"
KNOWN_KEYS = (
    BLOB_FORMAT_KEY,
    NAMED_DATA_THRESHOLD_KEY,
    NAMED_DATA_FILE_KEY,
    MAX_MEMORY_KEY,
    HEADER_FORMAT_KEY,
)

#: A file tag: a plain file name, so that TAG.ptd lands in the output directory.
_FILE_TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class CompileSpecError(ValueError):
    """A compile spec has an unknown key or an unusable value."""


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    """The compile specs of one delegate, parsed and checked."""

    blob_format: tuple[int, int] = BLOB_FORMAT
    #: Constants of at least this many bytes become named data; None: never.
    named_data_threshold: int | None = None
    #: ExecuTorch's external-data tag (the .ptd is TAG.ptd); None: inside the .pte.
    named_data_file: str | None = None
    #: The memory limit the header records; None: what the blob needs.
    max_memory_bytes: int | None = None
    #: The contract header format written (backend_kit.header).
    header_format: int = 2

    @property
    def named_data_file_name(self) -> str | None:
        """The file name ExecuTorch writes for the tag ("weights" -> "weights.ptd")."""
        tag = self.named_data_file
        if tag is None:
            return None
        return tag if tag.endswith(".ptd") else f"{tag}.ptd"


def blob_format_spec(major: int, minor: int) -> CompileSpec:
    """A compile spec that asks preprocess for blob format ``major.minor``."""
    return CompileSpec(BLOB_FORMAT_KEY, f"{major}.{minor}".encode())


def named_data_specs(threshold: int, file: str | None = None) -> list[CompileSpec]:
    """Compile specs that store constants of ``threshold`` bytes or more as named
    data: in the external file ``file``.ptd when ``file`` is given, else in the .pte."""
    specs = [CompileSpec(NAMED_DATA_THRESHOLD_KEY, str(int(threshold)).encode())]
    if file is not None:
        specs.append(CompileSpec(NAMED_DATA_FILE_KEY, file.encode()))
    parse_compile_specs(specs)
    return specs


def _text(spec: CompileSpec) -> str:
    try:
        return bytes(spec.value).decode("ascii")
    except UnicodeDecodeError:
        raise CompileSpecError(
            f"compile spec {spec.key!r} must be ASCII, got {bytes(spec.value)!r}"
        ) from None


def parse_compile_specs(compile_specs: list[CompileSpec]) -> CompileOptions:
    """The options the specs ask for, checked against what can be written."""
    fmt = BLOB_FORMAT
    threshold = None
    file = None
    max_memory = None
    header_format = 2
    for spec in compile_specs:
        if spec.key == BLOB_FORMAT_KEY:
            try:
                major, minor = (int(p) for p in _text(spec).split("."))
            except (ValueError, CompileSpecError):
                raise CompileSpecError(
                    f"compile spec {BLOB_FORMAT_KEY!r} must be b'MAJOR.MINOR', got {bytes(spec.value)!r}"
                ) from None
            fmt = (major, minor)
        elif spec.key == NAMED_DATA_THRESHOLD_KEY:
            text = _text(spec)
            if not text.isdigit():
                raise CompileSpecError(
                    f"compile spec {NAMED_DATA_THRESHOLD_KEY!r} must be a byte count in ASCII digits "
                    f"(b'1048576'), got {bytes(spec.value)!r}"
                )
            threshold = int(text)
        elif spec.key == NAMED_DATA_FILE_KEY:
            text = _text(spec)
            if not _FILE_TAG.fullmatch(text):
                raise CompileSpecError(
                    f"compile spec {NAMED_DATA_FILE_KEY!r} must be a file tag of 1 to 64 characters "
                    f"[A-Za-z0-9._-] (ExecuTorch writes TAG.ptd), got {bytes(spec.value)!r}"
                )
            file = text
        elif spec.key == MAX_MEMORY_KEY:
            text = _text(spec)
            if not text.isdigit() or int(text) == 0 or int(text) >= 1 << 64:
                raise CompileSpecError(
                    f"compile spec {MAX_MEMORY_KEY!r} must be a byte count from 1 to 2^64-1 in ASCII digits "
                    f"(b'268435456'), got {bytes(spec.value)!r}"
                )
            max_memory = int(text)
        elif spec.key == HEADER_FORMAT_KEY:
            text = _text(spec)
            if text not in ("1", "2"):
                raise CompileSpecError(
                    f"compile spec {HEADER_FORMAT_KEY!r} must be b'1' or b'2', got {bytes(spec.value)!r}"
                )
            header_format = int(text)
        else:
            raise CompileSpecError(
                f"unknown compile spec {spec.key!r}; the reference backend knows "
                + ", ".join(repr(k) for k in KNOWN_KEYS)
            )
    if fmt[0] != BLOB_FORMAT[0] or not BLOB_FORMAT_MINOR_MIN <= fmt[1] <= BLOB_FORMAT[1]:
        raise CompileSpecError(
            f"blob format {fmt[0]}.{fmt[1]} cannot be written; this exporter writes "
            f"{BLOB_FORMAT[0]}.{BLOB_FORMAT_MINOR_MIN} to {BLOB_FORMAT[0]}.{BLOB_FORMAT[1]}"
        )
    if file is not None and threshold is None:
        raise CompileSpecError(
            f"compile spec {NAMED_DATA_FILE_KEY!r} needs {NAMED_DATA_THRESHOLD_KEY!r}: "
            "without a threshold no constant becomes named data"
        )
    if threshold is not None and fmt[1] < NAMED_DATA_MINOR:
        raise CompileSpecError(
            f"named data needs blob format {BLOB_FORMAT[0]}.{NAMED_DATA_MINOR} or newer; "
            f"blob format {fmt[0]}.{fmt[1]} cannot store it"
        )
    if header_format == 1 and (max_memory is not None or threshold is not None):
        raise CompileSpecError(
            f"header format 1 records neither a memory limit nor named-data checksums; drop {HEADER_FORMAT_KEY!r} "
            f"or {MAX_MEMORY_KEY!r} / {NAMED_DATA_THRESHOLD_KEY!r}"
        )
    return CompileOptions(
        blob_format=fmt,
        named_data_threshold=threshold,
        named_data_file=file,
        max_memory_bytes=max_memory,
        header_format=header_format,
    )


def memory_limit_spec(max_bytes: int) -> CompileSpec:
    """A compile spec that records ``max_bytes`` as the blob's memory limit."""
    return CompileSpec(MAX_MEMORY_KEY, str(int(max_bytes)).encode())


def requested_blob_format(compile_specs: list[CompileSpec]) -> tuple[int, int]:
    """The blob format the specs ask for (all specs are checked)."""
    return parse_compile_specs(compile_specs).blob_format
