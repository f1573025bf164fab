"""RT-7 (C-RT-9): the forged formats it tries, the reference runtime passing it, and compat finding
the rules through the installed descriptor. The broken variants whose runtimes differ from their
declared rules are in tests/conformance/test_broken_backends.py (CLAIMS_NEWER_MINOR,
UNDERSTATES_OLD_FORMATS)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from backend_kit.header import Header, encode
from conformance.checks.runtime import format_forgeries

REPO = Path(__file__).resolve().parents[2]


def test_forgeries_span_every_declared_format_and_one_past_it():
    blob = encode(Header("ReferenceBackend", (1, 3), (0, 3, 0), (1, 5, 1)), b"payload!")
    pairs = format_forgeries(blob, (1, 2), (0, 3))
    assert (2, (1, 3)) not in pairs  # the blob as written
    assert {f for f, bf in pairs if bf == (1, 3)} == {0, 1, 3}
    assert {bf[1] for f, bf in pairs if f == 2 and bf[0] == 1} == {0, 1, 2, 4}
    assert {(2, (0, 0)), (2, (0, 3)), (2, (2, 0)), (2, (2, 3))} <= set(pairs)
    assert len(pairs) == len(set(pairs))


@pytest.mark.full
def test_the_reference_runtime_behaves_as_its_rules_declare(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "run",
            "--backend",
            "ReferenceBackend",
            "--checks",
            "RT-7",
            "--report-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    report = json.loads((tmp_path / "report.json").read_text())
    (result,) = report["results"]
    assert result["outcome"] == "passed", (result, proc.stdout[-2000:])
    assert "forged formats of sample 'mlp'" in result["reason"]


@pytest.mark.full
def test_compat_reads_the_rules_the_installed_descriptor_declares():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "compat",
            str(REPO / "tests/golden/1.5.1/reference.pte"),
            "--runtime",
            "1.5.1",
            "--backend",
            "ReferenceBackend==0.3.0",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)["answers"][1]
    assert answer["status"] == "runs" and "site-packages/reference_backend/acceptance.json" in answer["why"]
