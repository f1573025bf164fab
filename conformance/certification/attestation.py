"""Signed reports: the report as an in-toto attestation in a DSSE envelope.

The attestation is an in-toto Statement v1 whose subjects are the SHA-256
digests of the vendor's artifacts (its wheel and its runtime libraries) and
whose predicate is the report, unchanged. It is wrapped in a DSSE envelope
(payload type ``application/vnd.in-toto+json``) and signed either with a
local Ed25519 key (``sign --key``; securesystemslib does the DSSE envelope and
its pre-authentication encoding, cryptography the Ed25519 signature) or
keylessly with Sigstore (``sign --sigstore``, needs the optional ``sigstore``
package and a network). Format: docs/report-schema.md, "Attestation".
"""

from __future__ import annotations

import base64
import binascii
import email.parser
import hashlib
import json
import os
import zipfile
from pathlib import Path
from typing import Any

from conformance.input_files import FileTooLarge, NotARegularFile, open_regular, read_bounded
from conformance.report import MAX_HASH_BYTES, file_sha256

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
#: This project's predicate: an executorch-conformance report (schema 2).
PREDICATE_TYPE = "https://executorch-conformance.dev/attestation/report/v2"
SIGSTORE_BUNDLE_MEDIA_PREFIX = "application/vnd.dev.sigstore.bundle"


class AttestationError(ValueError):
    """A key, an envelope or an artifact is not what it should be; the message says what."""


# --------------------------------------------------------------------------- keys


#: A PEM key file is read only if it is at most this long.
MAX_KEY_BYTES = 1 << 16


def _read_pem(path: str | Path) -> bytes:
    try:
        return read_bounded(path, MAX_KEY_BYTES)
    except FileTooLarge:
        raise AttestationError(f"{path} is more than {MAX_KEY_BYTES} bytes: not a PEM key") from None
    except NotARegularFile as exc:
        raise AttestationError(f"cannot read key: {exc}") from None
    except OSError as exc:
        raise AttestationError(f"cannot read key {path}: {exc.strerror or exc}") from None


def load_private_key(path: str | Path):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    data = _read_pem(path)
    try:
        key = load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise AttestationError(f"{path} is not an unencrypted PEM private key: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise AttestationError(
            f"{path} is a {type(key).__name__.removeprefix('_')}, not an Ed25519 private key"
        )
    return key


def load_public_key(path: str | Path):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    data = _read_pem(path)
    if b"PRIVATE KEY" in data:
        raise AttestationError(
            f"{path} is a private key; give the public key (keygen writes it as *.pub.pem)"
        )
    try:
        key = load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise AttestationError(f"{path} is not a PEM public key: {exc}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise AttestationError(
            f"{path} is a {type(key).__name__.removeprefix('_')}, not an Ed25519 public key"
        )
    return key


def _sslib_key(public_key):
    from securesystemslib.signer import SSlibKey

    return SSlibKey.from_crypto(public_key)


def key_id(public_key) -> str:
    """The key id used in the envelope's signatures (securesystemslib's default: a SHA-256 of the key)."""
    return _sslib_key(public_key).keyid


def generate_key(out: str | Path) -> tuple[Path, Path, str]:
    """Writes an Ed25519 private key to ``out`` (mode 0600) and its public key to ``<stem>.pub.pem``."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private_path = Path(out)
    public_path = private_path.with_name(private_path.name.removesuffix(".pem") + ".pub.pem")
    for path in (private_path, public_path):
        if path.exists():
            raise AttestationError(f"{path} exists; not overwritten")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    private_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(private_pem)
    public_path.write_bytes(public_pem)
    return private_path, public_path, key_id(key.public_key())


# --------------------------------------------------------------------------- artifacts


#: A wheel's METADATA is read only if it is at most this long.
MAX_METADATA_BYTES = 1 << 20


def wheel_problems(report: dict[str, Any], wheel: str | Path) -> tuple[str, list[str]]:
    """(sha256 of the wheel, problems): the wheel must be the backend's distribution at the
    certified version, and any recorded runtime library it holds must be the one tested."""
    path = Path(wheel)
    try:
        digest = file_sha256(path)
        archive = zipfile.ZipFile(open_regular(path))
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        return "", [f"--wheel {path}: not a readable wheel ({getattr(exc, 'strerror', None) or exc})"]
    problems = []
    backend = report["backend"]
    with archive:
        names = archive.namelist()
        metadata = [
            n
            for n in names
            if n.count("/") == 1 and n.split("/")[0].endswith(".dist-info") and n.endswith("/METADATA")
        ]
        if len(metadata) != 1:
            return digest, [f"--wheel {path}: holds {len(metadata)} .dist-info/METADATA files, not one"]
        with archive.open(metadata[0]) as f:
            text = f.read(MAX_METADATA_BYTES + 1)
        if len(text) > MAX_METADATA_BYTES:
            return digest, [f"--wheel {path}: {metadata[0]} is more than {MAX_METADATA_BYTES} bytes"]
        meta = email.parser.Parser().parsestr(text.decode("utf-8", "replace"))
        from packaging.utils import canonicalize_name
        from packaging.version import InvalidVersion, Version

        if canonicalize_name(meta.get("Name", "")) != canonicalize_name(backend["distribution"]):
            problems.append(
                f"--wheel {path.name} is the distribution {meta.get('Name')!r}, but the report "
                f"certifies {backend['distribution']!r}"
            )
        try:
            same = Version(meta.get("Version", "")) == Version(backend["version"])
        except InvalidVersion:
            same = meta.get("Version") == backend["version"]
        if not same:
            problems.append(
                f"--wheel {path.name} is version {meta.get('Version')!r}, but the report certifies "
                f"{backend['distribution']} {backend['version']}"
            )
        for lib in backend.get("runtime_libraries", []):
            if lib.get("path") is None:  # runtime_libraries() raised: no file to look for
                continue
            base = Path(lib["path"]).name
            for name in (n for n in names if n.rsplit("/", 1)[-1] == base):
                h, read = hashlib.sha256(), 0
                with archive.open(name) as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                        read += len(chunk)
                        if read > MAX_HASH_BYTES:
                            return digest, [
                                f"--wheel {path.name}: {name} unpacks to more than {MAX_HASH_BYTES} bytes"
                            ]
                if h.hexdigest() != lib["sha256"]:
                    problems.append(
                        f"--wheel {path.name}: {name} has SHA-256 {h.hexdigest()[:16]}…, but the "
                        f"tested {base} had {str(lib['sha256'])[:16]}…"
                    )
    return digest, problems


def library_problems(report: dict[str, Any], library: str | Path) -> tuple[str, list[str]]:
    """(sha256 of the file, problems): the file must be one of the runtime libraries the report tested."""
    path = Path(library)
    try:
        digest = file_sha256(path)
    except OSError as exc:
        return "", [f"--library {path}: cannot be read ({exc.strerror or exc})"]
    recorded = report["backend"].get("runtime_libraries", [])
    if any(lib["sha256"] == digest for lib in recorded):
        return digest, []
    if not recorded:
        return digest, [f"--library {path.name}: the report records no runtime library"]
    same_name = [
        lib for lib in recorded if lib.get("path") is not None and Path(lib["path"]).name == path.name
    ] or recorded
    told = ", ".join(f"{Path(lib['path']).name} {str(lib['sha256'])[:16]}…" for lib in same_name)
    return digest, [
        (
            f"--library {path.name} has SHA-256 {digest[:16]}…, which is not the tested runtime library "
            f"({told})"
        )
    ]


def subjects(report: dict[str, Any], wheels=(), libraries=()) -> list[dict[str, Any]]:
    """The statement's subjects: the wheels and libraries given (checked against the report), or else
    the runtime libraries the report records."""
    out, problems = [], []
    for wheel in wheels:
        digest, found = wheel_problems(report, wheel)
        problems += found
        why = _wheel_name_problem(Path(wheel).name, report["backend"])
        problems += [f"--wheel {why}"] if why and not found else []
        out.append({"name": Path(wheel).name, "digest": {"sha256": digest}})
    for library in libraries:
        digest, found = library_problems(report, library)
        problems += found
        out.append({"name": Path(library).name, "digest": {"sha256": digest}})
    if not libraries:
        for lib in report["backend"].get("runtime_libraries", []):
            if lib.get("sha256") and lib.get("path") is not None:
                out.append({"name": Path(lib["path"]).name, "digest": {"sha256": lib["sha256"]}})
    if problems:
        raise AttestationError("; ".join(problems))
    if not out:
        raise AttestationError(
            "nothing to attest: the report records no runtime library; give --wheel or --library"
        )
    return out


# --------------------------------------------------------------------------- statement and envelope


def statement(report: dict[str, Any], subject: list[dict[str, Any]]) -> dict[str, Any]:
    return {"_type": STATEMENT_TYPE, "subject": subject, "predicateType": PREDICATE_TYPE, "predicate": report}


def statement_bytes(stmt: dict[str, Any]) -> bytes:
    return json.dumps(stmt, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sign_envelope(payload: bytes, private_key) -> dict[str, Any]:
    """A DSSE envelope of ``payload`` signed with the Ed25519 ``private_key``."""
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import CryptoSigner

    envelope = Envelope(payload=payload, payload_type=PAYLOAD_TYPE, signatures={})
    envelope.sign(CryptoSigner(private_key))
    return envelope.to_dict()


def write_envelope(envelope: dict[str, Any], path: str | Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(envelope, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    return path


def is_envelope(doc: Any) -> bool:
    return isinstance(doc, dict) and "payloadType" in doc and "payload" in doc


def is_sigstore_bundle(doc: Any) -> bool:
    return isinstance(doc, dict) and str(doc.get("mediaType", "")).startswith(SIGSTORE_BUNDLE_MEDIA_PREFIX)


def _b64(value: str, what: str) -> bytes:
    """Standard or URL-safe base64 (DSSE accepts both), strictly."""
    try:
        return base64.b64decode(value.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        raise AttestationError(f"{what} is not base64") from None


def open_envelope(envelope: dict[str, Any]) -> tuple[bytes, dict[str, Any]]:
    """(payload bytes, statement) of a DSSE envelope, its structure checked; the signature is not."""
    if not isinstance(envelope.get("payload"), str) or not isinstance(envelope.get("payloadType"), str):
        raise AttestationError("the envelope's payload and payloadType must be strings")
    if envelope["payloadType"] != PAYLOAD_TYPE:
        raise AttestationError(
            f"the envelope's payloadType is {envelope['payloadType']!r}, not {PAYLOAD_TYPE!r}"
        )
    signatures = envelope.get("signatures")
    if not isinstance(signatures, list) or not all(
        isinstance(s, dict) and isinstance(s.get("sig"), str) and isinstance(s.get("keyid", ""), str)
        for s in signatures
    ):
        raise AttestationError("the envelope's signatures must be a list of {keyid, sig} objects")
    payload = _b64(envelope["payload"], "the envelope's payload")
    return payload, parse_statement(payload)


def parse_statement(payload: bytes) -> dict[str, Any]:
    from conformance.certification.strict_json import loads_strict

    try:
        stmt = loads_strict(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise AttestationError(f"the envelope's payload is not a JSON in-toto statement ({exc})") from None
    if not isinstance(stmt, dict) or stmt.get("_type") != STATEMENT_TYPE:
        raise AttestationError(f"the envelope's payload is not an in-toto Statement ({STATEMENT_TYPE})")
    if stmt.get("predicateType") != PREDICATE_TYPE:
        raise AttestationError(
            f"the statement's predicateType is {stmt.get('predicateType')!r}, not {PREDICATE_TYPE!r}"
        )
    subject = stmt.get("subject")
    if (
        not isinstance(subject, list)
        or not subject
        or not all(
            isinstance(s, dict)
            and isinstance(s.get("digest"), dict)
            and isinstance(s["digest"].get("sha256"), str)
            for s in subject
        )
    ):
        raise AttestationError("the statement's subject must be a non-empty list of {name, digest: {sha256}}")
    if not isinstance(stmt.get("predicate"), dict):
        raise AttestationError("the statement's predicate (the report) is not an object")
    return stmt


def verify_envelope(envelope: dict[str, Any], public_keys: list) -> str:
    """The key id of the trusted key whose signature verifies; AttestationError if none does."""
    from securesystemslib import exceptions
    from securesystemslib.dsse import Envelope

    try:
        parsed = Envelope.from_dict(json.loads(json.dumps(envelope)))  # from_dict edits its argument
    except (KeyError, ValueError, TypeError, exceptions.FormatError, binascii.Error) as exc:
        raise AttestationError(f"the envelope's signatures are malformed ({exc})") from None
    if not parsed.signatures:
        raise AttestationError("the envelope carries no signature")
    keys = [_sslib_key(k) for k in public_keys]
    try:
        accepted = parsed.verify(keys, 1)
    except (exceptions.Error, ValueError):
        signed_by = ", ".join(k[:16] + "…" for k in parsed.signatures)
        if not set(parsed.signatures) & {k.keyid for k in keys}:
            trusted = ", ".join(k.keyid[:16] + "…" for k in keys)
            raise AttestationError(
                f"signed by key {signed_by}, which is not a trusted key (trusted: {trusted})"
            ) from None
        raise AttestationError(
            f"the signature by trusted key {signed_by} does not verify: the attestation was "
            "altered after it was signed"
        ) from None
    return next(iter(accepted))


def subject_problems(stmt: dict[str, Any], digests: dict[str, str]) -> list[str]:
    """Each of ``digests`` (what -> sha256) must be a subject of the statement."""
    signed = {s["digest"]["sha256"] for s in stmt["subject"]}
    return [
        f"{what} (SHA-256 {d[:16]}…) is not a subject of the signed attestation"
        for what, d in digests.items()
        if d and d not in signed
    ]


def _wheel_name_problem(name: str, backend: dict[str, Any]) -> str | None:
    """Why a wheel file name is not one of the certified distribution and version, or None."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
    from packaging.version import InvalidVersion, Version

    try:
        dist, version, _, _ = parse_wheel_filename(name)
    except (InvalidWheelFilename, InvalidVersion):
        return f"{name!r} is not a wheel file name (distribution-version-python-abi-platform.whl)"
    try:
        certified = Version(backend["version"])
    except InvalidVersion:
        certified = None
    if dist != canonicalize_name(backend["distribution"]) or version != certified:
        return (
            f"{name} is a wheel of {dist} {version}, but the report certifies "
            f"{backend['distribution']} {backend['version']}"
        )
    return None


def statement_problems(stmt: dict[str, Any], report: dict[str, Any]) -> list[str]:
    """The statement's subjects must be what its predicate (the report) tested: each a runtime library the
    report records (by SHA-256), or a wheel named for the certified distribution and version."""
    problems = []
    backend = report["backend"]
    tested = {lib.get("sha256") for lib in backend.get("runtime_libraries", []) if lib.get("sha256")}
    for i, s in enumerate(stmt["subject"]):
        name, digest = s.get("name"), s["digest"]["sha256"]
        if not isinstance(name, str) or not name:
            problems.append(f"subject[{i}] of the signed attestation has no name")
        elif name.endswith(".whl"):
            why = _wheel_name_problem(name, backend)
            if why:
                problems.append(f"subject {why}")
        elif digest not in tested:
            problems.append(
                f"subject {name} (SHA-256 {digest[:16]}…) is not a runtime library the signed report tested "
                f"(it records {', '.join(sorted(d[:16] + '…' for d in tested)) or 'none'})"
            )
    return problems


# --------------------------------------------------------------------------- sigstore (optional, online)


def _sigstore():
    try:
        import sigstore  # noqa: F401
    except ImportError:
        raise AttestationError(
            "Sigstore needs the optional 'sigstore' package: pip install 'executorch-conformance[sigstore]'"
        ) from None


def sigstore_sign(payload: bytes, identity_token: str | None) -> str:
    """A Sigstore bundle (JSON) of the statement ``payload``, signed keylessly (network: Fulcio, Rekor)."""
    _sigstore()
    from sigstore.dsse import Statement
    from sigstore.models import ClientTrustConfig
    from sigstore.oidc import IdentityToken, Issuer, detect_credential
    from sigstore.sign import SigningContext

    try:  # network, OIDC, Fulcio, Rekor: any failure is one line
        config = ClientTrustConfig.production()
        raw = identity_token or detect_credential()
        token = IdentityToken(raw) if raw else Issuer(config.signing_config.get_oidc_url()).identity_token()
        with SigningContext.from_trust_config(config).signer(token) as signer:
            return signer.sign_dsse(Statement(payload)).to_json()
    except Exception as exc:  # noqa: BLE001
        raise AttestationError(f"Sigstore signing failed: {type(exc).__name__}: {exc}") from None


def sigstore_verify(
    bundle_doc: dict[str, Any], identity: str, issuer: str | None
) -> tuple[bytes, dict[str, Any]]:
    """(payload, statement) of a Sigstore bundle whose certificate names ``identity`` (and ``issuer``),
    verified against Sigstore's public-good trust root (network: the TUF trust root)."""
    _sigstore()
    from sigstore.errors import Error as SigstoreError
    from sigstore.models import Bundle
    from sigstore.verify import Verifier
    from sigstore.verify.policy import Identity

    try:
        bundle = Bundle.from_json(json.dumps(bundle_doc))
        payload_type, payload = Verifier.production().verify_dsse(
            bundle, Identity(identity=identity, issuer=issuer)
        )
    except (SigstoreError, ValueError) as exc:
        raise AttestationError(
            f"the Sigstore bundle does not verify for identity {identity!r}: {exc}"
        ) from None
    except Exception as exc:  # noqa: BLE001  (network, TUF trust root)
        raise AttestationError(f"Sigstore verification could not run: {type(exc).__name__}: {exc}") from None
    if payload_type != PAYLOAD_TYPE:
        raise AttestationError(
            f"the Sigstore bundle's payload type is {payload_type!r}, not {PAYLOAD_TYPE!r}"
        )
    return payload, parse_statement(payload)


def sigstore_payload(bundle_doc: dict[str, Any]) -> tuple[bytes, dict[str, Any]]:
    """(payload, statement) of a Sigstore bundle, without checking its signature (no network)."""
    envelope = bundle_doc.get("dsseEnvelope")
    if not isinstance(envelope, dict):
        raise AttestationError("the Sigstore bundle holds no DSSE envelope (dsseEnvelope)")
    return open_envelope(envelope)
