"""The reference backend builds as a wheel with plain `pip wheel` (build
isolation on: the contract kit comes from a wheel built from kit/ first,
offered with --find-links), and the wheel carries the compiled runtime, its
headers and its CMake package, with a RUNPATH that works wherever the wheel
is installed."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

# The full tier (CI; bash scripts/test.sh --full): builds and installs wheels
pytestmark = pytest.mark.full

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> tuple[Path, Path]:
    """(reference backend wheel, kit wheel)."""
    out, kit = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("kit-wheel")
    for source, dest, extra in (
        (ROOT / "kit", kit, []),
        (ROOT / "reference_backend", out, ["--find-links", str(kit)]),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dest), *extra, str(source)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
    (path,) = out.glob("executorch_reference_backend-*.whl")
    (kit_wheel,) = kit.glob("executorch_backend_kit-*-py3-none-any.whl")
    return path, kit_wheel


@pytest.fixture(scope="module")
def wheel(wheels) -> Path:
    return wheels[0]


def test_wheel_contents(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in [
        "reference_backend/__init__.py",
        "reference_backend/lib/libreference_backend_runtime.so",
        "reference_backend/lib/libreference_backend.a",
        "reference_backend/lib/build_info.json",
        "reference_backend/lib/cmake/ReferenceBackend/ReferenceBackendConfig.cmake",
        "reference_backend/include/reference_backend/reference_backend.h",
    ]:
        assert name in names, name
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Requires-Dist: executorch<1.6,>=1.5" in text
    assert "Requires-Dist: executorch-backend-kit<0.2,>=0.1" in text


def test_kit_wheel_is_pure_python_with_its_headers_and_cmake(wheels):
    names = set(zipfile.ZipFile(wheels[1]).namelist())
    for name in [
        "backend_kit/header.py",
        "backend_kit/runtime.py",
        "backend_kit/include/backend_kit/header.h",
        "backend_kit/include/backend_kit/register.h",
        "backend_kit/cmake/BackendKitConfig.cmake",
        "backend_kit/cmake/BackendKit.cmake",
    ]:
        assert name in names, name


def test_runtime_library_runpath_is_relative(wheel, tmp_path):
    zipfile.ZipFile(wheel).extract("reference_backend/lib/libreference_backend_runtime.so", tmp_path)
    with open(tmp_path / "reference_backend/lib/libreference_backend_runtime.so", "rb") as f:
        elf = ELFFile(f)
        dynamic = next(s for s in elf.iter_sections() if isinstance(s, DynamicSection))
        needed = [t.needed for t in dynamic.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
        runpath = [t.runpath for t in dynamic.iter_tags() if t.entry.d_tag == "DT_RUNPATH"]
    assert "libexecutorch.so" in needed
    entries = runpath[0].split(":")
    assert "$ORIGIN/../../executorch/lib" in entries
    assert not [e for e in entries if e.startswith("/")], entries


def test_check_wheel_passes_the_reference_backends_own_wheel(wheel, capsys):
    """executorch-conformance check-wheel on the wheel pip built: no error, and the rows say why."""
    import json

    from conformance.cli import main

    code = main(["check-wheel", str(wheel), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["errors"] == 0, [r for r in doc["rows"] if r["severity"] == "error"]
    lib = "reference_backend/lib/libreference_backend_runtime.so"
    rows = {(r["check"], r["subject"]): r for r in doc["rows"]}
    assert rows[("abi 1.5.1", lib)]["verdict"] == rows[("abi 1.5.0", lib)]["verdict"] == "binary compatible"
    assert rows[("abi 1.4.1", lib)]["verdict"] == "must rebuild"
    assert doc["admitted_releases"] == ["1.5.0", "1.5.1"]
    assert any(r["check"] == "platform" for r in doc["rows"])
    assert not [r for r in doc["rows"] if r["check"] == "paths" and r["severity"] != "ok"]
