"""A real report of a short run (PKG and BLOB against the reference backend):
it verifies, its library matches, and ``verify --rerun`` finds edited outcomes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from templates import finish

from conformance.certification.rerun import differences, rerun_command

CHECKS = "PKG,BLOB"


def cli(*args, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    out = tmp_path_factory.mktemp("real")
    proc = cli("run", "--backend", "ReferenceBackend", "--checks", CHECKS, "-n", "1", "--report-dir", out)
    assert (out / "report.json").exists(), proc.stdout + proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["options"]["checks"] == CHECKS and report["options"]["workers"] == 1
    return out, report


@pytest.mark.full  # verifies against a fresh build of the runtime library: full tier
def test_the_real_report_verifies_with_its_runtime_library(real):
    out, report = real
    (lib,) = report["backend"]["runtime_libraries"]
    proc = cli("verify", out / "report.json", "--library", lib["path"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    total, passed = len(report["results"]), report["summary"]["passed"]
    assert f"verdict: CONFORMANT (standard mode): {passed}/{total} passed" in proc.stdout
    assert report["options"]["checks"] == CHECKS and sorted(report["selected"]) == sorted(
        r["id"] for r in report["results"]
    )


@pytest.mark.full
def test_rerun_lists_the_checks_whose_outcome_differs(real, tmp_path):
    _, report = real
    edited = {k: v for k, v in json.loads(json.dumps(report)).items() if k != "content_sha256"}
    for r in edited["results"]:
        if r["id"] == "PKG-3":
            r.update(outcome="not_applicable", reason="declared")
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(finish(edited)))
    proc = cli("verify", path, "--rerun")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"--checks {CHECKS}" in proc.stdout and "--certify" not in proc.stdout
    assert f"re-run: 1 of {len(report['results'])} checks differ here:" in proc.stdout
    assert "PKG-3: the report says not_applicable, the re-run here says passed" in proc.stdout


def test_rerun_command_and_differences():
    options = {
        "backend": "B",
        "expectations": None,
        "certify": True,
        "checks": None,
        "timeout": 30,
        "workers": 2,
    }
    assert rerun_command(options, "/tmp/x")[3:] == [
        "run",
        "--backend",
        "B",
        "--report-dir",
        "/tmp/x",
        "-n",
        str(min(2, os.cpu_count() or 1)),
        "--certify",
        "--timeout",
        "30",
    ]
    with pytest.raises(ValueError, match="which is not here"):
        rerun_command(dict(options, expectations="/nowhere/expect.toml"), "/tmp/x")
    old = {
        "results": [
            {"id": "A-1", "outcome": "passed", "reason": ""},
            {"id": "A-2", "outcome": "failed", "reason": ""},
        ]
    }
    assert differences(old, old) == []
    new = {"results": [{"id": "A-1", "outcome": "crashed", "reason": "SIGSEGV"}]}
    assert differences(old, new) == [
        "A-1: the report says passed, the re-run here says crashed: SIGSEGV",
        "A-2: the report says failed, the re-run has no result for it",
    ]


@pytest.mark.parametrize(
    ("name", "change", "expected"),
    [
        (
            "made-up backend",
            lambda b: b.update(
                id="MadeUpBackend",
                distribution="made-up-backend",
                version="9.9.9",
                installed_version="9.9.9",
                runtime_libraries=[{"path": "/opt/madeup/libmadeup.so", "sha256": "ab" * 32}],
            ),
            "backend id: the report describes 'MadeUpBackend', 'ReferenceBackend' here is 'ReferenceBackend'",
        ),
        (
            "same names, another runtime library",
            lambda b: b["runtime_libraries"][0].update(sha256="cd" * 32),
            "(SHA-256 cdcdcdcdcdcdcdcd…) the report tested is not installed here",
        ),
        (
            "same names, another installed version",
            lambda b: b.update(installed_version="0.0.1"),
            "installed version: the report tested '0.0.1'",
        ),
    ],
    ids=["made-up-backend", "another-library", "another-installed-version"],
)
@pytest.mark.full  # a rerun process each: the full tier (CI) runs them
def test_rerun_refuses_a_report_of_another_backend_than_its_options_name(
    real, tmp_path, name, change, expected
):
    """options.backend is only a name: a report of a made-up backend naming the reference backend in its
    options is not confirmed by a re-run of the reference backend; nothing runs."""
    _, report = real
    forged = {k: v for k, v in json.loads(json.dumps(report)).items() if k != "content_sha256"}
    change(forged["backend"])
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(finish(forged)))
    proc = cli("verify", path, "--rerun")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "re-run refused:" in proc.stdout and expected in proc.stdout, proc.stdout
    assert "re-running:" not in proc.stdout and "the same outcome" not in proc.stdout
