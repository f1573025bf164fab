"""RT-1 and RT-2 on backends that ExecuTorch's own Python runtime registers at import (XNNPACK,
OpenVINO in the 1.5.1 wheel), and on variants whose registration claims are wrong (C-RT-1, C-RT-2)."""

from __future__ import annotations

import importlib.util
import re

import pytest
from suite_runner import results_by_id, run_suite

# The full tier (CI; bash scripts/test.sh --full): RT runs of XNNPACK and OpenVINO variants
pytestmark = pytest.mark.full

needs_openvino = pytest.mark.skipif(
    importlib.util.find_spec("openvino") is None or importlib.util.find_spec("nncf") is None,
    reason="the scoreboard extra (openvino, nncf) is not installed: pip install -e '.[scoreboard]'",
)


def _run(tmp_path, backend, checks="RT-1,RT-2", env=None):
    _code, report, output = run_suite(tmp_path, backend, "--checks", checks, env=env)
    assert report is not None, output
    return results_by_id(report)


def test_xnnpack_registered_at_import_passes_rt1_and_rt2(tmp_path):
    results = _run(tmp_path, "scoreboard.xnnpack.descriptor:DESCRIPTOR")
    assert results["RT-1"]["outcome"] == "passed", results["RT-1"]
    assert (
        "registered by ExecuTorch's Python runtime when executorch.runtime is imported"
        in results["RT-1"]["reason"]
    )
    assert "libexecutorch_backend_xnnpack.so" in results["RT-1"]["reason"]
    assert results["RT-2"]["outcome"] == "passed", results["RT-2"]


def test_an_undeclared_import_registration_fails_rt1_only(tmp_path):
    results = _run(tmp_path, "broken_backends.registration:XNNPACK_UNDECLARED")
    assert results["RT-1"]["outcome"] == "failed"
    assert re.search(
        r"'XnnpackBackend' was already registered before load_runtime\(\) ran: ExecuTorch's own Python "
        r"runtime registers it when executorch.runtime is imported .*declare registered_at_import=True",
        results["RT-1"]["reason"],
    ), results["RT-1"]["reason"]
    # RT-2 asks is_available() of the registered backend: it is available, whatever RT-1 found.
    assert results["RT-2"]["outcome"] == "passed", results["RT-2"]


def test_a_backend_that_load_runtime_registers_cannot_claim_import(tmp_path):
    results = _run(tmp_path, "broken_backends.registration:REFERENCE_CLAIMS_IMPORT")
    assert results["RT-1"]["outcome"] == "failed"
    assert re.search(
        r"declares registered_at_import, but importing executorch.runtime did not register 'ReferenceBackend'"
        r".*load_runtime\(\) registered it: declare registered_at_import=False",
        results["RT-1"]["reason"],
    ), results["RT-1"]["reason"]
    assert results["RT-2"]["outcome"] == "passed", results["RT-2"]


def test_registration_by_the_descriptor_module_is_not_registration_at_import(tmp_path):
    results = _run(tmp_path, "broken_backends.preregistered_claims_import:DESCRIPTOR")
    assert results["RT-1"]["outcome"] == "failed"
    assert "it was registered while the descriptor's module was imported" in results["RT-1"]["reason"]


def test_rt2_of_a_backend_never_registered_says_so_in_its_own_words(tmp_path):
    results = _run(tmp_path, "broken_backends.registration:NEVER_REGISTERED")
    assert results["RT-1"]["outcome"] == "failed"
    assert "is not among the registered backends" in results["RT-1"]["reason"]
    assert results["RT-2"]["outcome"] == "failed"
    assert results["RT-2"]["reason"].startswith(
        "is_available() cannot be asked: 'ReferenceBackend' is not registered"
    )
    assert results["RT-2"]["reason"] != results["RT-1"]["reason"]


@needs_openvino
def test_openvino_without_its_engine_is_registered_but_unavailable(tmp_path):
    """OPENVINO_LIB_PATH naming no library: the wheel's runtime still registers OpenvinoBackend at import,
    but cannot open libopenvino_c, so is_available() is false (RT-2), and the engine library the
    descriptor names does not exist (PKG-5, PKG-6)."""
    env = {"OPENVINO_LIB_PATH": str(tmp_path / "missing" / "libopenvino_c.so")}
    results = _run(tmp_path, "scoreboard.openvino.descriptor:DESCRIPTOR", "RT-1,RT-2,PKG-5,PKG-6", env)
    assert results["RT-1"]["outcome"] == "passed", results["RT-1"]
    assert results["RT-2"]["outcome"] == "failed"
    assert results["RT-2"]["reason"] == "OpenvinoBackend.is_available() is false"
    for check in ("PKG-5", "PKG-6"):
        assert results[check]["outcome"] == "failed"
        assert re.search(
            r"engine_libraries\(\) names .*missing/libopenvino_c.so, which does not exist",
            results[check]["reason"],
        )
