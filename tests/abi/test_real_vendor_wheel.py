"""abi check and check-wheel on a real out-of-tree delegate's wheel from the package registry:
torch-tensorrt-executorch-runtime 0.1.0 (requires executorch==1.4.1), which ships its own
rebuilt ``_portable_lib`` next to sibling libraries found through ``$ORIGIN``. Full tier: it
downloads the 7.6 MB wheel into build/vendor-wheels (cached)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conformance.cli import main

REPO = Path(__file__).resolve().parents[2]
WHEELS = REPO / "build" / "vendor-wheels"
NAME = "torch_tensorrt_executorch_runtime-0.1.0-cp311-cp311-manylinux_2_28_x86_64.whl"
PKG = "torch_tensorrt_executorch_runtime"

pytestmark = pytest.mark.full


@pytest.fixture(scope="module")
def wheel() -> Path:
    path = WHEELS / NAME
    if not path.exists():
        WHEELS.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "torch-tensorrt-executorch-runtime==0.1.0", "--no-deps",
             "--only-binary=:all:", "-d", str(WHEELS), "-q"],
            check=True, timeout=900,
        )  # fmt: skip
    return path


def test_its_runtime_copy_gets_the_registry_verdict_and_its_imports_bind_to_siblings(wheel, tmp_path, capsys):
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp_path)
    lib = tmp_path / PKG / "_portable_lib.cpython-311-x86_64-linux-gnu.so"
    code = main(["abi", "check", str(lib), "--built-against", "1.4.1", "--against", "1.4.1", "--json"])
    doc = json.loads(capsys.readouterr().out)
    (v,) = doc["verdicts"]
    assert code == 4 and v["verdict"] == "carries its own runtime", v
    assert doc["runtime_copy"]["evidence"].startswith("defines executorch::runtime::get_backend_class")
    assert "Program::load" in doc["runtime_copy"]["evidence"]
    # Before: 'missing symbol ... (not exported by executorch/backends/qualcomm/libqnn_executorch_backend.so)'.
    assert not [r for r in v["reasons"] if r.startswith("missing symbol")], v["reasons"]
    assert v["providers"] == {
        f"{PKG}/libaoti_cuda_shims.so (package)": 11,
        f"{PKG}/libextension_cuda.so (package)": 1,
    }
    assert "whose registry is in executorch/backends/qualcomm/libqnn_executorch_backend.so" in v["meaning"]


def test_check_wheel_reports_the_private_runtime_and_the_sibling_without_runpath(wheel, capsys):
    code = main(["check-wheel", str(wheel), "--against", "1.4.1", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    errors = [(r["check"], r["subject"], r["verdict"]) for r in doc["rows"] if r["severity"] == "error"]
    assert errors == [
        ("abi 1.4.1", f"{PKG}/_portable_lib.cpython-311-x86_64-linux-gnu.so", "carries its own runtime")
    ]
    rows = {(r["check"], r["subject"]): r for r in doc["rows"]}
    shims = rows[("abi 1.4.1", f"{PKG}/libaoti_cuda_shims.so")]
    assert shims["verdict"] == "binary compatible" and "judged as loaded by" in shims["why"]
    warnings = [
        r["why"] for r in doc["rows"] if r["severity"] == "warning" and r["subject"].endswith("shims.so")
    ]
    assert any(w.startswith("NEEDED libextension_cuda.so: found only because") for w in warnings), warnings
    assert doc["executorch_requirement"] == "executorch==1.4.1"
