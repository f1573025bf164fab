"""The contract blob header ("ECVH"): encoder, decoder, checksum and the
runtime's verdict, as specified in docs/blob-header.md.

Byte layout (little-endian), the same 40 fixed bytes in header formats 1 and 2::

    0  magic b"ECVH"               24 u64 payload_size
    4  u16 header_length           32 u32 checksum of the header with this
    6  u16 header_format_version          field zeroed, then the payload:
    8  u16 blob_format major,minor        CRC-32 (format 1), CRC-32C (format 2)
   12  u16 x3 backend version      36 u16 backend_id_offset
   18  u16 x3 executorch version   38 u16 backend_id_length
   40  format 2: extension records up to backend_id_offset (format 1: bytes
       a reader skips), then the backend id (UTF-8), zero padding to 8

An extension record (format 2) is ``u16 tag, u16 flags, u32 length``, then
``length`` bytes, then zeros to a multiple of 8. Flag bit 0 (REQUIRED): a
runtime that does not know the tag must refuse the blob. The kit defines
tag 1 (memory limit: u64, the most bytes the runtime may allocate to load and
run the blob) and tag 2 (named-data checksums: one u32 CRC-32C per named-data
entry, in the order of the backend's own named-data table).

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
from collections.abc import Mapping

MAGIC = b"ECVH"
#: The newest header format, written by default and read with format 1.
HEADER_FORMAT_VERSION = 2
#: Header format 1: CRC-32 (zlib's), no extension records. Still read.
HEADER_FORMAT_CRC32 = 1
#: Bytes of the fixed part of header format 1 (the backend id follows it).
FIXED_LENGTH = 40
#: Fewer bytes than this cannot even say which header format they are.
MIN_JUDGEABLE = 8
CHECKSUM_OFFSET = 32
MAX_BACKEND_ID = 255

#: Each field of the fixed part, in byte order: name -> (offset, struct format of its value).
FIELDS: dict[str, tuple[int, str]] = {}
for _name, _format in (
    ("magic", "4s"),
    ("header_length", "H"),
    ("header_format_version", "H"),
    ("blob_format", "2H"),
    ("backend_version", "3H"),
    ("executorch_version", "3H"),
    ("payload_size", "Q"),
    ("checksum", "I"),
    ("backend_id_offset", "H"),
    ("backend_id_length", "H"),
):
    FIELDS[_name] = (sum(struct.calcsize("<" + f) for _, f in FIELDS.values()), _format)
del _name, _format

FIXED = struct.Struct("<" + "".join(f for _, f in FIELDS.values()))
assert FIXED.size == FIXED_LENGTH and FIELDS["checksum"][0] == CHECKSUM_OFFSET

#: Extension record header (format 2): u16 tag, u16 flags, u32 value length.
EXTENSION = struct.Struct("<HHI")
#: Flag bit 0: a runtime that does not know the tag must refuse the blob.
EXTENSION_REQUIRED = 1
#: u64: the most bytes a runtime may allocate to load and run the blob.
TAG_MEMORY_LIMIT = 1
#: u32 per named-data entry: its CRC-32C, in the order of the backend's named-data table.
TAG_NAMED_DATA_CHECKSUMS = 2

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
    #: Format 2, extension tag 1: the most bytes the runtime may allocate for the blob; None: not recorded.
    memory_limit: int | None = None
    #: Format 2, extension tag 2: CRC-32C of each named-data entry; None: not recorded.
    named_data_checksums: tuple[int, ...] | None = None


def version_triple(text: str) -> tuple[int, int, int]:
    """The (major, minor, patch) a header records for a release, by the one rule every writer
    and reader of headers uses: ``text`` parsed by ``packaging.version.Version`` (PEP 440), its
    release numbers padded with zeros or cut to three; the epoch, pre-release, post, dev and
    local parts are not recorded. "1.5.1+cpu" -> (1, 5, 1), "0.2" -> (0, 2, 0), "1.0.0rc1" and
    "1.0.0-rc.1" -> (1, 0, 0). HeaderError (a ValueError) for text PEP 440 does not read (such
    as the semver pre-release "1.0.0-alpha.beta") or a number that does not fit a u16."""
    from packaging.version import InvalidVersion, Version

    try:
        release = Version(text).release
    except (InvalidVersion, TypeError):
        raise HeaderError(f"{text!r} is not a version (PEP 440, for example 0.1.0)") from None
    major, minor, patch = (release + (0, 0))[:3]
    for name, value in (("major", major), ("minor", minor), ("patch", patch)):
        if value > 0xFFFF:
            raise HeaderError(
                f"version {text}: its {name} number {value} does not fit the header's u16 field"
            )
    return major, minor, patch


def crc32c(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-32C (Castagnoli) of ``data``, continuing from ``crc``: the checksum of
    header format 2 and of named data. Uses the ``crc32c`` package (hardware
    CRC32C instructions where the CPU has them)."""
    import crc32c as _crc32c  # imported on first use: decoding format-1 headers does not need it

    return _crc32c.crc32c(data, value=crc)


def claimed_header_format(blob: bytes | memoryview) -> int | None:
    """The header format number ``blob`` claims, which a runtime reads before any other field:
    None unless ``blob`` starts with MAGIC and holds the MIN_JUDGEABLE bytes that say it."""
    if len(blob) < MIN_JUDGEABLE or bytes(blob[:4]) != MAGIC:
        return None
    return int(struct.unpack_from("<H", blob, FIELDS["header_format_version"][0])[0])


def rewrite(
    blob: bytes | memoryview,
    fields: Mapping[str, int | tuple[int, ...] | bytes],
    *,
    fix_checksum: bool = True,
) -> bytes:
    """``blob`` with the fixed-header ``fields`` (names of FIELDS; a tuple for blob_format and the
    versions) replaced in place, every other byte kept: a forgery, to test a runtime with. Unless
    ``fix_checksum`` is false or ``checksum`` is one of the fields, the checksum is recomputed over
    the header and payload the rewritten fields describe. HeaderError for a blob shorter than the
    fixed part, an unknown field, or a value its field cannot hold."""
    raw = bytearray(blob)
    if len(raw) < FIXED_LENGTH:
        raise HeaderError(f"{len(raw)} bytes hold no fixed header ({FIXED_LENGTH} bytes) to rewrite")
    for name, value in fields.items():
        if name not in FIELDS:
            raise HeaderError(f"the header has no field {name!r} (it has {', '.join(FIELDS)})")
        at, form = FIELDS[name]
        try:
            struct.pack_into("<" + form, raw, at, *(value if isinstance(value, tuple) else (value,)))
        except struct.error as exc:
            raise HeaderError(f"header field {name} cannot hold {value!r}: {exc}") from None
    if fix_checksum and "checksum" not in fields:
        (length,) = struct.unpack_from("<H", raw, FIELDS["header_length"][0])
        (size,) = struct.unpack_from("<Q", raw, FIELDS["payload_size"][0])
        struct.pack_into(
            "<I", raw, CHECKSUM_OFFSET, checksum(bytes(raw[:length]), bytes(raw[length : length + size]))
        )
    return bytes(raw)


def _header_format(header: bytes | memoryview) -> int:
    return struct.unpack_from("<H", header, 6)[0] if len(header) >= 8 else HEADER_FORMAT_VERSION


def checksum(header: bytes | memoryview, payload: bytes | memoryview) -> int:
    """The checksum field ``header`` must carry: over ``header`` with its checksum
    field as zero, then ``payload``. CRC-32 (zlib's) for header format 1,
    CRC-32C for format 2 (and, for forgeries, for any other format number)."""
    if _header_format(header) == HEADER_FORMAT_CRC32:
        crc = zlib.crc32(header[:CHECKSUM_OFFSET])
        crc = zlib.crc32(b"\0\0\0\0", crc)
        crc = zlib.crc32(header[CHECKSUM_OFFSET + 4 :], crc)
        return zlib.crc32(payload, crc)
    crc = crc32c(header[:CHECKSUM_OFFSET])
    crc = crc32c(b"\0\0\0\0", crc)
    crc = crc32c(header[CHECKSUM_OFFSET + 4 :], crc)
    return crc32c(payload, crc)


def _record(tag: int, value: bytes, flags: int = 0) -> bytes:
    return EXTENSION.pack(tag, flags, len(value)) + value + b"\0" * (-len(value) % 8)


def extension_records(header: Header) -> bytes:
    """The format-2 extension records ``encode`` writes for ``header``."""
    out = b""
    if header.memory_limit is not None:
        if not 0 <= header.memory_limit < 1 << 64:
            raise HeaderError(f"memory_limit {header.memory_limit} does not fit the header's u64 field")
        out += _record(TAG_MEMORY_LIMIT, struct.pack("<Q", header.memory_limit), EXTENSION_REQUIRED)
    if header.named_data_checksums is not None:
        crcs = header.named_data_checksums
        if any(not 0 <= c <= 0xFFFFFFFF for c in crcs):
            raise HeaderError("a named-data checksum does not fit a u32")
        out += _record(TAG_NAMED_DATA_CHECKSUMS, struct.pack(f"<{len(crcs)}I", *crcs), EXTENSION_REQUIRED)
    return out


def _u16(name: str, value: int) -> int:
    if not 0 <= value <= 0xFFFF:
        raise HeaderError(f"{name} {value} does not fit the header's u16 field")
    return value


def encode(header: Header, payload: bytes | memoryview) -> bytes:
    """Header + payload, with length, payload size and checksum filled in."""
    ident = header.backend_id.encode("utf-8")
    if not 0 < len(ident) <= MAX_BACKEND_ID:
        raise HeaderError(f"backend id {header.backend_id!r} must be 1 to {MAX_BACKEND_ID} bytes")
    if header.header_format_version == HEADER_FORMAT_CRC32:
        if header.memory_limit is not None or header.named_data_checksums is not None:
            raise HeaderError("header format 1 has no extension records (memory limit, named-data checksums)")
        records = b""
    else:
        records = extension_records(header)
    id_offset = FIXED_LENGTH + len(records)
    length = (id_offset + len(ident) + 7) // 8 * 8
    if length > 0xFFFF:
        raise HeaderError(f"the header would be {length} bytes, more than the u16 header_length holds")
    raw = (
        FIXED.pack(
            MAGIC,
            length,
            _u16("header_format_version", header.header_format_version),
            *(_u16("blob_format", v) for v in header.blob_format),
            *(_u16("backend_version", v) for v in header.backend_version),
            *(_u16("executorch_version", v) for v in header.executorch_version),
            len(payload),
            0,
            id_offset,
            len(ident),
        )
        + records
        + ident
        + b"\0" * (length - id_offset - len(ident))
    )
    crc = checksum(raw, payload)
    return raw[:CHECKSUM_OFFSET] + struct.pack("<I", crc) + raw[CHECKSUM_OFFSET + 4 :] + bytes(payload)


def printable(raw: bytes) -> str:
    """``raw`` for a log line: printable ASCII as is, other bytes and ``\\`` as ``\\xNN``."""
    return "".join(chr(b) if 0x20 <= b < 0x7F and b != 0x5C else f"\\x{b:02x}" for b in raw)


def log_safe(line: str | bytes) -> str:
    """``line`` made safe for any log sink: every byte that is not printable
    ASCII as ``\\xNN`` (the C++ ``backend_kit::log_safe``). ExecuTorch's
    Python log sink decodes lines as strict UTF-8 and a failure there ends
    the process, so a runtime passes every line through this first."""
    raw = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else bytes(line)
    return "".join(chr(b) if 0x20 <= b < 0x7F else f"\\x{b:02x}" for b in raw)


def _read_extensions(blob: bytes, id_off: int) -> tuple[int | None, tuple[int, ...] | None]:
    """The known records in ``blob[FIXED_LENGTH:id_off]`` (format 2). Raises
    HeaderError (invalid) for a malformed record, HeaderError with verdict
    incompatible for an unknown record marked required."""
    memory_limit = None
    named = None
    seen = set()
    pos = FIXED_LENGTH
    while pos < id_off:
        if id_off - pos < EXTENSION.size:
            raise HeaderError(f"header extension at offset {pos} runs into the backend id at offset {id_off}")
        tag, flags, size = EXTENSION.unpack_from(blob, pos)
        padded = size + (-size % 8)
        if padded > id_off - pos - EXTENSION.size:
            raise HeaderError(
                f"header extension {tag} at offset {pos} ({size} bytes) runs into the backend id "
                f"at offset {id_off}"
            )
        value = blob[pos + EXTENSION.size : pos + EXTENSION.size + size]
        if tag in seen:
            raise HeaderError(f"header extension {tag} at offset {pos} appears twice")
        if tag in (TAG_MEMORY_LIMIT, TAG_NAMED_DATA_CHECKSUMS):
            seen.add(tag)
        if tag == TAG_MEMORY_LIMIT:
            if size != 8:
                raise HeaderError(
                    f"header extension 1 (memory limit) at offset {pos} has {size} bytes, not 8"
                )
            (memory_limit,) = struct.unpack("<Q", value)
        elif tag == TAG_NAMED_DATA_CHECKSUMS:
            if size % 4:
                raise HeaderError(
                    f"header extension 2 (named-data checksums) at offset {pos} has {size} bytes, "
                    "not a multiple of 4"
                )
            named = struct.unpack(f"<{size // 4}I", value)
        elif flags & EXTENSION_REQUIRED:
            raise HeaderError(
                f"header extension {tag} at offset {pos} is required and unknown to this runtime",
                INCOMPATIBLE,
            )
        pos += EXTENSION.size + padded
    return memory_limit, named


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
        raise HeaderError(
            f"backend id [offset {id_off}, length {id_len}] lies outside the {length}-byte header"
        )
    try:
        ident = blob[id_off : id_off + id_len].decode("utf-8")
    except UnicodeDecodeError:
        raise HeaderError(
            f"backend id '{printable(blob[id_off : id_off + id_len][:64])}' is not UTF-8"
        ) from None
    memory_limit, named = _read_extensions(blob, id_off) if version >= 2 else (None, None)
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
        memory_limit=memory_limit,
        named_data_checksums=named,
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
            return Judgement(
                INCOMPATIBLE, f"{rt.backend_id}: incompatible blob: {exc.problem}; {runtime}; {fix}", None
            )
        return Judgement(INVALID, f"{rt.backend_id}: invalid blob: {exc.problem}", None)
    if h.backend_id != rt.backend_id:
        ident = printable(h.backend_id.encode("utf-8")[:64])
        return Judgement(
            INVALID,
            f"{rt.backend_id}: invalid blob: blob was written for backend '{ident}', not '{rt.backend_id}'",
            h,
        )
    major, minor = h.blob_format
    written = f"format {major}.{minor}, written by {_v(h.backend_version)} with executorch {_v(h.executorch_version)}"
    if major > rt.blob_format_major or (major == rt.blob_format_major and minor > rt.blob_format_minor):
        if h.backend_version > rt.backend_version:
            fix = (
                f"fix: use a runtime from {rt.distribution}>={_v(h.backend_version)}, "
                f"or re-export with {_v(rt.backend_version)}"
            )
        else:  # a writer no newer than this runtime cannot have written this format
            fix = (
                f"fix: re-export the model, {rt.distribution} {_v(h.backend_version)} "
                f"writes no format {major}.{minor} (the blob was altered)"
            )
        return Judgement(INCOMPATIBLE, f"{rt.backend_id}: incompatible blob: {written}; {runtime}; {fix}", h)
    since = f"fix: re-export with {rt.distribution}>={_v(rt.current_format_since)}"
    if major < rt.blob_format_major or minor < rt.blob_format_minor_min:
        return Judgement(
            INCOMPATIBLE, f"{rt.backend_id}: incompatible blob: {written}; {runtime}; {since}", h
        )
    if minor < rt.blob_format_minor:
        return Judgement(
            REEXPORT_RECOMMENDED,
            f"{rt.backend_id}: warning: old blob, runs; {written}; {runtime}; {since}",
            h,
        )
    return Judgement(COMPATIBLE, "", h)
