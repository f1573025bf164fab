"""The contract blob header ("ECVH"): encoder, decoder, checksum and the
runtime's verdict, as specified in docs/blob-header.md.

Byte layout (little-endian)::

    0  magic b"ECVH"               24 u64 payload_size
    4  u16 header_length           32 u32 checksum (CRC-32 of header with this
    6  u16 header_format_version          field zeroed, then the payload)
    8  u16 blob_format major,minor 36 u16 backend_id_offset
   12  u16 x3 backend version      38 u16 backend_id_length
   18  u16 x3 executorch version   40 backend id (UTF-8), zero padding to 8

A blob is exactly header + payload: ``payload_size`` must equal the bytes
after the header, so trailing bytes are refused like missing ones.

:func:`decode` and :func:`judge` apply the same rules in the same order, and
``include/backend_kit/header.h`` is the C++ twin of :func:`judge`: both
produce the same verdict and the same one-line message for every blob
(``kit/vectors/blob_headers.json`` holds the proof).
"""

from __future__ import annotations

import dataclasses
import struct
import zlib

MAGIC = b"ECVH"
HEADER_FORMAT_VERSION = 1
#: Bytes of the fixed part of header format 1 (the backend id follows it).
FIXED_LENGTH = 40
#: Fewer bytes than this cannot even say which header format they are.
MIN_JUDGEABLE = 8
CHECKSUM_OFFSET = 32
MAX_BACKEND_ID = 255

FIXED = struct.Struct("<4sHH2H3H3HQIHH")
assert FIXED.size == FIXED_LENGTH

COMPATIBLE = "compatible"
REEXPORT_RECOMMENDED = "compatible, re-export recommended"
INCOMPATIBLE = "incompatible"
INVALID = "invalid"
#: In the order of the C++ ``backend_kit::Verdict`` values 0-3.
VERDICTS = (COMPATIBLE, REEXPORT_RECOMMENDED, INCOMPATIBLE, INVALID)


class HeaderError(ValueError):
    """A blob does not start with a readable contract header.

    ``verdict`` is what a runtime decides: "invalid", or "incompatible" for a
    well-formed header of a format this code does not read.
    """

    def __init__(self, problem: str, verdict: str = INVALID):
        super().__init__(problem)
        self.problem = problem
        self.verdict = verdict


@dataclasses.dataclass(frozen=True)
class Header:
    """The header fields. :func:`encode` computes ``header_length``,
    ``payload_size`` and ``checksum``; :func:`decode` reads them all."""

    backend_id: str
    blob_format: tuple[int, int]
    backend_version: tuple[int, int, int]
    executorch_version: tuple[int, int, int]
    payload_size: int = 0
    header_format_version: int = HEADER_FORMAT_VERSION
    header_length: int = 0
    checksum: int = 0
    backend_id_offset: int = FIXED_LENGTH


def checksum(header: bytes | memoryview, payload: bytes | memoryview) -> int:
    """CRC-32 (zlib's) over ``header`` with its checksum field as zero, then ``payload``."""
    crc = zlib.crc32(header[:CHECKSUM_OFFSET])
    crc = zlib.crc32(b"\0\0\0\0", crc)
    crc = zlib.crc32(header[CHECKSUM_OFFSET + 4 :], crc)
    return zlib.crc32(payload, crc)


def _u16(name: str, value: int) -> int:
    if not 0 <= value <= 0xFFFF:
        raise HeaderError(f"{name} {value} does not fit the header's u16 field")
    return value


def encode(header: Header, payload: bytes | memoryview) -> bytes:
    """Header + payload, with length, payload size and checksum filled in."""
    ident = header.backend_id.encode("utf-8")
    if not 0 < len(ident) <= MAX_BACKEND_ID:
        raise HeaderError(f"backend id {header.backend_id!r} must be 1 to {MAX_BACKEND_ID} bytes")
    length = (FIXED_LENGTH + len(ident) + 7) // 8 * 8
    raw = FIXED.pack(
        MAGIC,
        length,
        _u16("header_format_version", header.header_format_version),
        *(_u16("blob_format", v) for v in header.blob_format),
        *(_u16("backend_version", v) for v in header.backend_version),
        *(_u16("executorch_version", v) for v in header.executorch_version),
        len(payload),
        0,
        FIXED_LENGTH,
        len(ident),
    ) + ident + b"\0" * (length - FIXED_LENGTH - len(ident))
    crc = checksum(raw, payload)
    return raw[:CHECKSUM_OFFSET] + struct.pack("<I", crc) + raw[CHECKSUM_OFFSET + 4 :] + bytes(payload)


def printable(raw: bytes) -> str:
    """``raw`` for a log line: printable ASCII as is, other bytes and ``\\`` as ``\\xNN``."""
    return "".join(chr(b) if 0x20 <= b < 0x7F and b != 0x5C else f"\\x{b:02x}" for b in raw)


def decode(blob: bytes | memoryview) -> Header:
    """Decodes and checks the header of ``blob``: rules 1-7 of the verdict
    table (magic, header format, lengths, checksum, backend id).

    Version compatibility is the runtime's business (:func:`judge`). Raises
    HeaderError with the problem, worded as in the runtime's log line.
    """
    blob = bytes(blob)
    size = len(blob)
    if size < MIN_JUDGEABLE:
        raise HeaderError(f"truncated: {size} bytes, the header needs at least {FIXED_LENGTH}")
    if blob[:4] != MAGIC:
        raise HeaderError(
            f"wrong magic '{printable(blob[:4])}' at offset 0, expected 'ECVH' "
            "(not a blob of this backend, or corrupted)"
        )
    length, version = struct.unpack_from("<HH", blob, 4)
    if version == 0 or version > HEADER_FORMAT_VERSION:
        raise HeaderError(
            f"header format {version}, this runtime reads 1-{HEADER_FORMAT_VERSION}", INCOMPATIBLE
        )
    if length < FIXED_LENGTH or length > size:
        raise HeaderError(
            f"truncated or corrupt header: header_length {length}, blob size {size}, minimum {FIXED_LENGTH}"
        )
    (_, _, _, bmaj, bmin, v0, v1, v2, e0, e1, e2, payload_size, crc, id_off, id_len) = FIXED.unpack_from(blob)
    if payload_size > size - length:
        raise HeaderError(
            f"truncated: header promises a {payload_size}-byte payload after a {length}-byte header, "
            f"blob has {size} bytes"
        )
    if payload_size < size - length:
        raise HeaderError(
            f"trailing bytes: header promises a {payload_size}-byte payload after a {length}-byte header, "
            f"blob has {size} bytes"
        )
    actual = checksum(blob[:length], memoryview(blob)[length:])
    if actual != crc:
        raise HeaderError(
            f"checksum mismatch: header says 0x{crc:08x}, header and payload give 0x{actual:08x} (corrupted blob)"
        )
    if id_off < FIXED_LENGTH or id_len == 0 or id_off + id_len > length:
        raise HeaderError(f"backend id [offset {id_off}, length {id_len}] lies outside the {length}-byte header")
    try:
        ident = blob[id_off : id_off + id_len].decode("utf-8")
    except UnicodeDecodeError:
        raise HeaderError(f"backend id '{printable(blob[id_off : id_off + id_len][:64])}' is not UTF-8") from None
    return Header(
        backend_id=ident,
        blob_format=(bmaj, bmin),
        backend_version=(v0, v1, v2),
        executorch_version=(e0, e1, e2),
        payload_size=payload_size,
        header_format_version=version,
        header_length=length,
        checksum=crc,
        backend_id_offset=id_off,
    )


def payload_of(blob: bytes | memoryview) -> memoryview:
    """The payload bytes of a blob whose header decodes."""
    header = decode(blob)
    return memoryview(blob)[header.header_length : header.header_length + header.payload_size]


@dataclasses.dataclass(frozen=True)
class RuntimeVersions:
    """What a runtime knows about itself when it judges a blob (the C++
    ``backend_kit::RuntimeVersions``)."""

    backend_id: str
    distribution: str  # e.g. "executorch-reference-backend", named in the fixes
    backend_version: tuple[int, int, int]
    executorch_version: tuple[int, int, int]  # the ExecuTorch the runtime was built against
    blob_format_major: int
    blob_format_minor_min: int  # oldest minor still read
    blob_format_minor: int  # newest minor read
    current_format_since: tuple[int, int, int]  # first release writing major.minor


@dataclasses.dataclass(frozen=True)
class Judgement:
    verdict: str  # one of VERDICTS
    message: str  # the one log line; empty when compatible
    header: Header | None  # None when the header does not decode

    @property
    def runnable(self) -> bool:
        return self.verdict in (COMPATIBLE, REEXPORT_RECOMMENDED)


def _v(t: tuple[int, ...]) -> str:
    return ".".join(str(x) for x in t)


def judge(blob: bytes | memoryview, rt: RuntimeVersions) -> Judgement:
    """The verdict of a runtime ``rt`` on ``blob``: the rules of
    docs/blob-header.md "The runtime's verdicts", first match decides."""
    runtime = (
        f"runtime {_v(rt.backend_version)} for executorch {_v(rt.executorch_version)} reads formats "
        f"{rt.blob_format_major}.{rt.blob_format_minor_min}-{rt.blob_format_major}.{rt.blob_format_minor}"
    )
    try:
        h = decode(blob)
    except HeaderError as exc:
        if exc.verdict == INCOMPATIBLE:
            fix = f"fix: re-export with {rt.distribution}=={_v(rt.backend_version)}"
            return Judgement(INCOMPATIBLE, f"{rt.backend_id}: incompatible blob: {exc.problem}; {runtime}; {fix}", None)
        return Judgement(INVALID, f"{rt.backend_id}: invalid blob: {exc.problem}", None)
    if h.backend_id != rt.backend_id:
        ident = printable(h.backend_id.encode("utf-8")[:64])
        return Judgement(
            INVALID, f"{rt.backend_id}: invalid blob: blob was written for backend '{ident}', not '{rt.backend_id}'", h
        )
    major, minor = h.blob_format
    written = f"format {major}.{minor}, written by {_v(h.backend_version)} with executorch {_v(h.executorch_version)}"
    if major > rt.blob_format_major or (major == rt.blob_format_major and minor > rt.blob_format_minor):
        if h.backend_version > rt.backend_version:
            fix = (f"fix: use a runtime from {rt.distribution}>={_v(h.backend_version)}, "
                   f"or re-export with {_v(rt.backend_version)}")
        else:  # a writer no newer than this runtime cannot have written this format
            fix = (f"fix: re-export the model, {rt.distribution} {_v(h.backend_version)} "
                   f"writes no format {major}.{minor} (the blob was altered)")
        return Judgement(INCOMPATIBLE, f"{rt.backend_id}: incompatible blob: {written}; {runtime}; {fix}", h)
    since = f"fix: re-export with {rt.distribution}>={_v(rt.current_format_since)}"
    if major < rt.blob_format_major or minor < rt.blob_format_minor_min:
        return Judgement(INCOMPATIBLE, f"{rt.backend_id}: incompatible blob: {written}; {runtime}; {since}", h)
    if minor < rt.blob_format_minor:
        return Judgement(REEXPORT_RECOMMENDED, f"{rt.backend_id}: warning: old blob, runs; {written}; {runtime}; {since}", h)
    return Judgement(COMPATIBLE, "", h)
