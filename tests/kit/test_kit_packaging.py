"""The kit builds into a wheel silently (no setuptools warnings about its data
folders), and the wheel holds every header, CMake file and template file."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conformance.new_backend import template_files

# The full tier (CI; bash scripts/test.sh --full): builds the kit's wheel
pytestmark = pytest.mark.full

KIT = Path(__file__).resolve().parents[2] / "kit"


def wheel_of(source: Path, out: Path) -> tuple[Path, str]:
    """(the wheel of ``source``, everything its build printed), built verbosely as pip installs it."""
    argv = [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation"]
    proc = subprocess.run([*argv, "-w", str(out), str(source)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = out.glob("executorch_backend_kit-*.whl")
    return wheel, proc.stdout + proc.stderr


def setuptools_warnings(output: str) -> list[str]:
    return [
        line for line in output.splitlines() if "BuildBackendWarning" in line or "would be ignored" in line
    ]


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> tuple[Path, str]:
    return wheel_of(KIT, tmp_path_factory.mktemp("kit-wheel"))


def test_the_build_prints_no_setuptools_warning(build):
    noisy = setuptools_warnings(build[1])
    assert not noisy, "\n".join(noisy)


def test_the_old_package_list_is_what_made_the_warnings(tmp_path):
    """The kit's packaging before the fix (one package, its data folders as package data) warns,
    and the check above sees it."""
    copy = tmp_path / "kit"
    shutil.copytree(KIT, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    pyproject = copy / "pyproject.toml"
    text = pyproject.read_text()
    before = '[tool.setuptools]\npackages = ["backend_kit"]\n\n[tool.setuptools.package-data]\n'
    before += 'backend_kit = ["include/backend_kit/*.h", "cmake/*.cmake"]\n'
    pyproject.write_text(text[: text.index("[tool.setuptools.packages.find]")] + before)
    noisy = setuptools_warnings(wheel_of(copy, tmp_path / "out")[1])
    assert any("'backend_kit.cmake'" in line for line in noisy), noisy
    assert any("'backend_kit.include.backend_kit'" in line for line in noisy), noisy


def test_the_wheel_holds_the_headers_cmake_files_and_template(build):
    wheel, _ = build
    names = set(zipfile.ZipFile(wheel).namelist())
    source = KIT / "backend_kit"
    wanted = [
        f"backend_kit/include/backend_kit/{p.name}" for p in (source / "include" / "backend_kit").glob("*.h")
    ]
    wanted += [f"backend_kit/cmake/{p.name}" for p in (source / "cmake").glob("*.cmake")]
    wanted += [f"backend_kit/template/{p.as_posix()}" for p in template_files(source / "template")]
    assert len(wanted) > 20
    missing = sorted(set(wanted) - names)
    assert not missing, missing
    assert "backend_kit/template/.github/workflows/conformance.yml" in names
