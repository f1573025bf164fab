"""One version source (issue 29): conformance/version.py's SUITE_VERSION is what pip, the package and
every report say."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import tomllib

import conformance
from conformance.report import build_report
from conformance.version import SUITE_VERSION
from reference_backend.conformance import DESCRIPTOR

REPO = Path(__file__).resolve().parents[2]


def test_pyproject_takes_the_version_from_the_suite():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "conformance.version.SUITE_VERSION"
    }


def test_pip_show_the_package_and_the_report_agree():
    shown = subprocess.run(
        [sys.executable, "-m", "pip", "show", "executorch-conformance"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"Version: {SUITE_VERSION}\n" in shown, (
        f"pip show says {shown.split('Version: ')[1].split()[0]!r}, the suite {SUITE_VERSION}: reinstall the project "
        "(pip install -e .) after changing SUITE_VERSION"
    )
    assert importlib.metadata.version("executorch-conformance") == SUITE_VERSION == conformance.__version__
    report = build_report(
        descriptor=DESCRIPTOR,
        results=[],
        certify=False,
        interrupted=False,
        selected=[],
        options={
            "backend": "x",
            "expectations": None,
            "certify": False,
            "checks": None,
            "timeout": 1.0,
            "workers": 1,
        },
        command="x",
        duration_s=0.0,
    )
    assert report.suite_version == SUITE_VERSION
