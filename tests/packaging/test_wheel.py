"""The reference backend builds as a wheel with plain `pip wheel` (build
isolation on), and the wheel carries the compiled runtime, its headers and
its CMake package, with a RUNPATH that works wherever the wheel is installed."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT / "reference_backend")],
        capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (path,) = out.glob("executorch_reference_backend-*.whl")
    return path


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
