"""badge draws only from a report that verifies, names the profiles it certifies (else the verdict), and
shows what was waived."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

from templates import finish, make_report

from conformance.certification.badge import badge_fields
from conformance.checks import all_checks
from conformance.descriptor import CAPABILITY_ABSENT
from conformance.report import seal
from conformance.version import SUITE_VERSION

N = len(all_checks())
MINOR = ".".join(SUITE_VERSION.split(".")[:2])  # 0.6


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def waived_report():
    """Standard mode: 17 passed, 3 waived (an expected failure, two declared not-applicable MUST checks),
    6 exempt (no named data: NDATA-1 to NDATA-5 and MTH-2)."""
    report = make_report("standard")
    report.pop("content_sha256")
    report["backend"]["capabilities"].remove("named_data")
    for r in report["results"]:
        if r["applies_if"] == "named_data":
            r.update(outcome="not_applicable", reason=CAPABILITY_ABSENT["named_data"])
        elif r["id"] == "RT-3":
            r.update(outcome="expected_failure", reason="known numerics issue")
        elif r["id"] in ("RT-5", "RT-6"):
            r.update(outcome="not_applicable", reason="declared")
    return finish(report)


def core_and_named_data_report():
    """Certify mode: a backend that declares named data only and writes no contract header (BLOB-1 and
    BLOB-2 fail; it refuses an incompatible blob in its own format, RT-5): not certified as a whole, but
    for Core and Named data."""
    report = make_report()
    report.pop("content_sha256")
    report["backend"]["capabilities"] = ["named_data"]
    for r in report["results"]:
        if r["applies_if"] not in (None, "named_data"):
            r.update(outcome="not_applicable", reason=CAPABILITY_ABSENT[r["applies_if"]])
        elif r["id"] in ("BLOB-1", "BLOB-2"):
            r.update(outcome="failed", reason="the blob has no contract header")
    return finish(report)


ALL_PROFILES = (
    "Core + Versioned blobs + Named data + Quantized + Dynamic shapes + Composition + Stateful programs"
)


def test_badge_messages_name_the_certified_profiles_or_the_verdict_and_show_waivers():
    assert badge_fields(make_report()) == (
        f"ExecuTorch conformance {MINOR}",
        f"{ALL_PROFILES} on executorch 1.5.1",
        "#2e7d32",
    )
    assert badge_fields(make_report("standard"))[1:] == (
        f"conformant {N}/{N} passed on executorch 1.5.1",
        "#43a047",
    )
    _label, message, color = badge_fields(waived_report())
    assert message == f"conformant {N - 9}/{N} passed, 3 waived, 6 exempt on executorch 1.5.1"
    assert color == "#9e9d24"


def test_badge_of_a_backend_certified_for_core_and_named_data():
    report = core_and_named_data_report()
    assert report["verdict"] == "not conformant"
    label, message, color = badge_fields(report)
    assert f"{label}: {message}" == f"ExecuTorch conformance {MINOR}: Core + Named data on executorch 1.5.1"
    assert color == "#2e7d32"


def test_badge_without_core_shows_the_verdict():
    report = make_report()
    report.pop("content_sha256")
    next(r for r in report["results"] if r["id"] == "RT-3").update(outcome="failed", reason="off")
    assert badge_fields(finish(report))[1:] == (
        f"not conformant {N - 1}/{N} passed on executorch 1.5.1",
        "#c62828",
    )


def test_badge_of_a_report_before_profiles_computes_them():
    report = make_report()
    report.pop("content_sha256")
    report.pop("profiles")
    assert badge_fields(seal(report))[1] == f"{ALL_PROFILES} on executorch 1.5.1"


def test_badge_command_writes_from_a_verified_report(tmp_path):
    (tmp_path / "report.json").write_text(json.dumps(waived_report()))
    proc = cli("badge", tmp_path / "report.json")
    assert proc.returncode == 0, proc.stderr
    badge = json.loads((tmp_path / "badge.json").read_text())
    assert badge["message"] == f"conformant {N - 9}/{N} passed, 3 waived, 6 exempt on executorch 1.5.1"
    assert badge["label"] == f"ExecuTorch conformance {MINOR}"
    assert f"conformant {N - 9}/{N} passed, 3 waived, 6 exempt" in (tmp_path / "badge.svg").read_text()
    verified = cli("verify", tmp_path / "report.json")
    assert f"CONFORMANT (standard mode): {N - 9}/{N} passed, 3 waived, 6 exempt (" in verified.stdout, (
        verified
    )


def test_badge_refuses_a_forged_report_in_one_line(tmp_path):
    report = copy.deepcopy(make_report())
    report["summary"].update(passed=999, total=999)
    from conformance.report import seal

    report.pop("content_sha256")
    (tmp_path / "report.json").write_text(json.dumps(seal(report)))
    proc = cli("badge", tmp_path / "report.json")
    output = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 1 and len(output.splitlines()) == 1, output
    assert f"does not verify: summary.passed is 999, but {N} results are passed" in output
    assert f"summary.total is 999, but the report has {N} results" in output
    assert not (tmp_path / "badge.json").exists()


def test_badge_from_a_signed_attestation_checks_the_key(tmp_path):
    (tmp_path / "report.json").write_text(json.dumps(make_report()))
    cli("keygen", "--out", tmp_path / "k.pem")
    cli("keygen", "--out", tmp_path / "o.pem")
    wheel = tmp_path / "executorch_reference_backend-0.2.0-py3-none-any.whl"
    import zipfile

    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(
            "executorch_reference_backend-0.2.0.dist-info/METADATA",
            "Name: executorch-reference-backend\nVersion: 0.2.0\n",
        )
    assert (
        cli("sign", tmp_path / "report.json", "--key", tmp_path / "k.pem", "--wheel", wheel).returncode == 0
    )
    wrong = cli(
        "badge",
        tmp_path / "report.intoto.jsonl",
        "--trusted-key",
        tmp_path / "o.pub.pem",
        "--out-dir",
        tmp_path / "b",
    )
    assert wrong.returncode == 1 and "not a trusted key" in wrong.stderr and not (tmp_path / "b").exists()
    ok = cli(
        "badge",
        tmp_path / "report.intoto.jsonl",
        "--trusted-key",
        tmp_path / "k.pub.pem",
        "--out-dir",
        tmp_path / "b",
    )
    assert (
        ok.returncode == 0
        and json.loads((tmp_path / "b" / "badge.json").read_text())["message"]
        == f"{ALL_PROFILES} on executorch 1.5.1"
    )
