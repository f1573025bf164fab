"""Signed reports: an in-toto Statement in a DSSE envelope, signed with Ed25519."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import zipfile

import pytest
from templates import finish, make_report

from conformance.certification import attestation as att
from conformance.checks import all_checks

LIB = b"\x7fELF pretend runtime library"

N = len(all_checks())


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def make_wheel(path, name="executorch-reference-backend", version="0.2.0", lib=LIB):
    dist = f"{name.replace('-', '_')}-{version}"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{dist}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        z.writestr("reference_backend/lib/libreference_backend_runtime.so", lib)
    return path


@pytest.fixture
def signed(tmp_path):
    """(dir, report path, attestation path, trusted public key, other public key, library path)."""
    lib = tmp_path / "libreference_backend_runtime.so"
    lib.write_bytes(LIB)
    report = make_report(
        libraries=[
            {
                "path": "/site-packages/reference_backend/lib/libreference_backend_runtime.so",
                "sha256": hashlib.sha256(LIB).hexdigest(),
            }
        ]
    )
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    assert cli("keygen", "--out", tmp_path / "vendor.pem").returncode == 0
    assert cli("keygen", "--out", tmp_path / "other.pem").returncode == 0
    proc = cli("sign", path, "--key", tmp_path / "vendor.pem")
    assert proc.returncode == 0, proc.stderr
    assert "report.intoto.jsonl: in-toto attestation signed by Ed25519 key" in proc.stdout
    return (
        tmp_path,
        path,
        tmp_path / "report.intoto.jsonl",
        tmp_path / "vendor.pub.pem",
        tmp_path / "other.pub.pem",
        lib,
    )


def test_keygen_writes_a_private_key_only_its_owner_reads(tmp_path):
    proc = cli("keygen", "--out", tmp_path / "k.pem")
    assert proc.returncode == 0 and "key id:" in proc.stdout
    assert (tmp_path / "k.pem").stat().st_mode & 0o777 == 0o600
    assert b"BEGIN PUBLIC KEY" in (tmp_path / "k.pub.pem").read_bytes()
    again = cli("keygen", "--out", tmp_path / "k.pem")
    assert again.returncode == 2 and "exists; not overwritten" in again.stderr


def test_attestation_is_an_in_toto_statement_in_a_dsse_envelope(signed):
    _, path, attestation, _, _, _ = signed
    (line,) = attestation.read_text().splitlines()
    envelope = json.loads(line)
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    (sig,) = envelope["signatures"]
    assert len(base64.b64decode(sig["sig"])) == 64  # Ed25519
    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == att.PREDICATE_TYPE
    assert statement["predicate"] == json.loads(path.read_text())
    assert statement["subject"] == [
        {"name": "libreference_backend_runtime.so", "digest": {"sha256": hashlib.sha256(LIB).hexdigest()}}
    ]


def test_dsse_signature_is_over_the_pae(signed):
    """The signature verifies with plain cryptography over DSSE's pre-authentication encoding."""
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    _, _, attestation, public, _, _ = signed
    envelope = json.loads(attestation.read_text())
    payload, ptype = base64.b64decode(envelope["payload"]), envelope["payloadType"].encode()
    pae = b"DSSEv1 %d %s %d %s" % (len(ptype), ptype, len(payload), payload)
    load_pem_public_key(public.read_bytes()).verify(base64.b64decode(envelope["signatures"][0]["sig"]), pae)


def test_signed_report_verifies_with_the_right_key(signed):
    _, _, attestation, public, _, lib = signed
    proc = cli("verify", attestation, "--trusted-key", public, "--require-signature", "--library", lib)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{attestation}: verified" in proc.stdout
    assert f"verdict: CERTIFIED (certify mode): {N}/{N} passed" in proc.stdout
    assert "signature: valid Ed25519 signature by trusted key" in proc.stdout
    assert "--library libreference_backend_runtime.so: the runtime library the report tested" in proc.stdout


def test_signed_report_fails_with_another_key(signed):
    _, _, attestation, _, other, _ = signed
    proc = cli("verify", attestation, "--trusted-key", other)
    assert proc.returncode == 1 and "which is not a trusted key" in proc.stdout, proc.stdout


def test_a_key_the_forger_made_is_not_trusted(signed):
    """The forger edits the report and signs it with their own key."""
    tmp, path, _, public, _, _ = signed
    report = json.loads(path.read_text())
    report["backend"]["id"] = "ForgedBackend"
    forged = tmp / "forged.json"
    forged.write_text(json.dumps(finish(report)))
    assert cli("keygen", "--out", tmp / "forger.pem").returncode == 0
    assert cli("sign", forged, "--key", tmp / "forger.pem").returncode == 0
    unverified = cli("verify", tmp / "forged.intoto.jsonl")  # a gate that forgot the key: not a pass
    assert (
        unverified.returncode == 1
        and "UNVERIFIED" in unverified.stdout
        and "verified\n" not in unverified.stdout
    )
    content_only = cli("verify", tmp / "forged.intoto.jsonl", "--allow-unsigned")  # asked for: content only
    assert (
        content_only.returncode == 0 and "signature was NOT checked (--allow-unsigned" in content_only.stdout
    )
    proc = cli("verify", tmp / "forged.intoto.jsonl", "--trusted-key", public)
    assert proc.returncode == 1 and "not a trusted key" in proc.stdout


def test_fail_edited_to_pass_verdict_recomputed_and_resealed_is_caught_by_the_signature(tmp_path):
    """The forgery the content checks cannot see: a consistent report that is not the one signed."""
    report = make_report()
    report.pop("content_sha256")
    next(r for r in report["results"] if r["id"] == "RT-3").update(outcome="failed", reason="output differs")
    failing = finish(report)
    (tmp_path / "report.json").write_text(json.dumps(failing))
    assert "NOT CONFORMANT" in cli("verify", tmp_path / "report.json").stdout  # a verdict, not a forgery
    cli("keygen", "--out", tmp_path / "k.pem")
    assert (
        cli(
            "sign",
            tmp_path / "report.json",
            "--key",
            tmp_path / "k.pem",
            "--wheel",
            make_wheel(tmp_path / "executorch_reference_backend-0.2.0-py3-none-any.whl"),
        ).returncode
        == 0
    )
    envelope = json.loads((tmp_path / "report.intoto.jsonl").read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    predicate = statement["predicate"]
    predicate.pop("content_sha256")
    next(r for r in predicate["results"] if r["id"] == "RT-3").update(outcome="passed", reason="")
    statement["predicate"] = finish(predicate)
    envelope["payload"] = base64.b64encode(att.statement_bytes(statement)).decode()
    (tmp_path / "edited.intoto.jsonl").write_text(json.dumps(envelope))
    unverified = cli("verify", tmp_path / "edited.intoto.jsonl")
    assert unverified.returncode == 1 and (
        "UNVERIFIED: signed, but no --trusted-key PUB.pem was given, so the signature was not checked"
        in unverified.stdout
    )
    content_only = cli("verify", tmp_path / "edited.intoto.jsonl", "--allow-unsigned")
    assert content_only.returncode == 0 and "CERTIFIED" in content_only.stdout  # what a hash alone allows
    proc = cli("verify", tmp_path / "edited.intoto.jsonl", "--trusted-key", tmp_path / "k.pub.pem")
    assert (
        proc.returncode == 1
        and "does not verify: the attestation was altered after it was signed" in proc.stdout
    )
    unsigned = cli(
        "verify", tmp_path / "report.json", "--require-signature", "--trusted-key", tmp_path / "k.pub.pem"
    )
    assert unsigned.returncode == 1 and "is an unsigned report" in unsigned.stdout


def test_one_edited_byte_of_the_payload_fails_the_signature(signed):
    tmp, _, attestation, public, _, _ = signed
    envelope = json.loads(attestation.read_text())
    payload = bytearray(base64.b64decode(envelope["payload"]))
    at = payload.index(b'"outcome":"passed"') + len('"outcome":"pa')
    payload[at] = ord("z")  # "pazsed": still JSON, one byte different
    envelope["payload"] = base64.b64encode(bytes(payload)).decode()
    edited = tmp / "edited.intoto.jsonl"
    edited.write_text(json.dumps(envelope))
    proc = cli("verify", edited, "--trusted-key", public)
    assert proc.returncode == 1 and "altered after it was signed" in proc.stdout, proc.stdout


@pytest.mark.parametrize("where", ["payload", "sig", "payloadType", "keyid"])
def test_one_edited_byte_anywhere_is_rejected_in_one_line(signed, where):
    tmp, _, attestation, public, _, _ = signed
    data = bytearray(attestation.read_bytes())
    start = data.index(f'"{where}":"'.encode()) + len(where) + 4
    data[start + 10] = ord("A") if data[start + 10] != ord("A") else ord("B")
    edited = tmp / "edited.intoto.jsonl"
    edited.write_bytes(bytes(data))
    proc = cli("verify", edited, "--trusted-key", public)
    output = (proc.stdout + proc.stderr).strip()
    assert proc.returncode in (1, 2) and "Traceback" not in output, output
    assert "REJECTED" in output or "verify:" in output


def test_a_swapped_library_file_is_rejected(signed):
    tmp, _, attestation, public, _, _ = signed
    swapped = tmp / "libreference_backend_runtime.so.new"
    swapped.write_bytes(LIB + b" patched")
    proc = cli("verify", attestation, "--trusted-key", public, "--library", swapped)
    assert proc.returncode == 1
    assert "is not the tested runtime library (libreference_backend_runtime.so" in proc.stdout
    assert "is not a subject of the signed attestation" in proc.stdout


def test_sign_refuses_a_library_that_was_not_tested_and_a_report_that_does_not_verify(signed):
    tmp, path, _, _, _, _ = signed
    other = tmp / "other.so"
    other.write_bytes(b"other")
    proc = cli("sign", path, "--key", tmp / "vendor.pem", "--library", other, "--out", tmp / "x.jsonl")
    assert proc.returncode == 2 and "is not the tested runtime library" in proc.stderr
    report = json.loads(path.read_text())
    report["summary"]["passed"] = 999
    (tmp / "bad.json").write_text(json.dumps(report))
    proc = cli("sign", tmp / "bad.json", "--key", tmp / "vendor.pem")
    assert proc.returncode == 2 and "does not verify, so it is not signed" in proc.stderr
    proc = cli("sign", path, "--key", tmp / "vendor.pub.pem")
    assert proc.returncode == 2 and "not an unencrypted PEM private key" in proc.stderr


def test_wheel_is_a_subject_and_must_be_the_certified_distribution(signed):
    tmp, path, _, public, _, _ = signed
    wheel = make_wheel(tmp / "executorch_reference_backend-0.2.0-py3-none-linux_x86_64.whl")
    assert (
        cli("sign", path, "--key", tmp / "vendor.pem", "--wheel", wheel, "--out", tmp / "w.jsonl").returncode
        == 0
    )
    ok = cli("verify", tmp / "w.jsonl", "--trusted-key", public, "--wheel", wheel)
    assert ok.returncode == 0 and "matches the report" in ok.stdout, ok.stdout
    # The same report, verified with a wheel of another version, another name, another library.
    for bad, expected in (
        (make_wheel(tmp / "v.whl", version="0.3.0"), "is version '0.3.0'"),
        (make_wheel(tmp / "n.whl", name="other-backend"), "is the distribution 'other-backend'"),
        (make_wheel(tmp / "l.whl", lib=b"rebuilt"), "but the tested libreference_backend_runtime.so"),
    ):
        proc = cli("verify", tmp / "w.jsonl", "--trusted-key", public, "--wheel", bad)
        assert proc.returncode == 1 and expected in proc.stdout, proc.stdout
        assert "is not a subject of the signed attestation" in proc.stdout
    # An unsigned report can still be checked against a wheel.
    assert cli("verify", path, "--wheel", wheel).returncode == 0
    not_zip = tmp / "x.whl"
    not_zip.write_bytes(b"no zip")
    proc = cli("verify", path, "--wheel", not_zip)
    assert proc.returncode == 1 and "not a readable wheel" in proc.stdout


def test_key_and_bundle_kinds_are_not_confused(signed, tmp_path):
    _, _path, attestation, public, _, _ = signed
    proc = cli("verify", attestation, "--identity", "vendor@example.com")
    assert proc.returncode == 1 and "verify it with --trusted-key, not --identity" in proc.stdout
    bundle = {
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "dsseEnvelope": json.loads(attestation.read_text()),
    }
    (tmp_path / "b.sigstore.json").write_text(json.dumps(bundle))
    proc = cli("verify", tmp_path / "b.sigstore.json", "--trusted-key", public)
    assert proc.returncode == 1 and "verify it with --identity" in proc.stdout
    proc = cli("verify", tmp_path / "b.sigstore.json")  # no identity: not a pass
    assert (
        proc.returncode == 1 and "UNVERIFIED: Sigstore bundle, but no --identity and --issuer" in proc.stdout
    )
    proc = cli("verify", tmp_path / "b.sigstore.json", "--allow-unsigned")  # content only, offline
    assert proc.returncode == 0 and "signature was NOT checked (--allow-unsigned" in proc.stdout
    proc = cli("verify", tmp_path / "b.sigstore.json", "--allow-unsigned", "--require-signature")
    assert proc.returncode == 2 and "--allow-unsigned skips the signature check" in proc.stderr


def test_sigstore_is_optional(signed):
    """Without the sigstore package, keyless signing and verification say how to get it (no network here)."""
    pytest.importorskip("securesystemslib")
    try:
        import sigstore  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("sigstore is installed; its online paths are not tested here")
    _, path, _, _, _, _ = signed
    proc = cli("sign", path, "--sigstore")
    assert proc.returncode == 2 and "pip install 'executorch-conformance[sigstore]'" in proc.stderr


def test_a_statement_with_a_duplicated_key_is_refused_even_if_signed():
    """Two parsers could read two different reports from it: refused, not resolved."""
    payload = (
        b'{"_type": "https://in-toto.io/Statement/v1", "predicateType": "%s", "subject": '
        b'[{"name": "a", "digest": {"sha256": "00"}}], "predicate": {"verdict": "not conformant", '
        b'"verdict": "certified"}}' % att.PREDICATE_TYPE.encode()
    )
    with pytest.raises(att.AttestationError, match="key 'verdict' appears twice"):
        att.parse_statement(payload)
