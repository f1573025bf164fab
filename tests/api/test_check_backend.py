"""check_backend and parametrize_with_checks from a vendor's own pytest run (issue 29): the same
isolated checks as the CLI, one pytest test per check."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from conformance.descriptor import DescriptorError
from conformance.testing import backend_spec, check_backend, parametrize_with_checks

VENDOR_TESTS = r"""
import dataclasses

import pytest

from conformance.testing import BackendNotConformant, check_backend, parametrize_with_checks
from suite_0_2_0.narrowed import NARROWED


@pytest.mark.full
@parametrize_with_checks(NARROWED, checks="AOT-1,AOT-4,NDATA-1")
def test_conformance(check):
    check()


@pytest.mark.full
def test_check_backend_raises_naming_the_failed_check():
    with pytest.raises(BackendNotConformant) as err:
        check_backend(NARROWED, checks="AOT-4")
    assert "is not conformant:\n  - AOT-4 failed: " in str(err.value)
    assert "ReferencePartitioner claimed aten::sub.Tensor in sample model 'elementwise'" in str(err.value)
    report = err.value.report
    assert report.options.backend == "suite_0_2_0.narrowed:NARROWED"
    assert [(r.id, r.outcome) for r in report.results] == [("AOT-4", "failed")]


def test_a_descriptor_made_in_a_function_is_refused_with_the_reason():
    with pytest.raises(TypeError, match="define it at module level"):
        check_backend(dataclasses.replace(NARROWED, backend_id="Local"))
"""


@pytest.fixture(scope="module")
def vendor_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vendor")
    (folder / "test_vendor_conformance.py").write_text(textwrap.dedent(VENDOR_TESTS))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(folder),
            "-p",
            "no:cacheprovider",
            "-rA",
            "-q",
            "-n",
            "0",
            "-o",
            "addopts=",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=1800,
    )


@pytest.mark.full
def test_one_pytest_test_per_check_with_its_result(vendor_run):
    out = vendor_run.stdout
    assert "PASSED test_vendor_conformance.py::test_conformance[AOT-1]" in out, out[-4000:]
    assert "FAILED test_vendor_conformance.py::test_conformance[AOT-4]" in out, out[-4000:]
    assert "AOT-4 (MUST, C-AOT-4: only operators the backend declares are delegated) failed: " in out
    assert "ReferencePartitioner claimed aten::sub.Tensor in sample model 'elementwise'" in out
    assert (
        "NDATA-1 not applicable: the descriptor declares no named data support (named_data is None)"
    ) in out, out[-4000:]


@pytest.mark.full
def test_check_backend_from_the_vendors_tests(vendor_run):
    out = vendor_run.stdout
    assert "PASSED test_vendor_conformance.py::test_check_backend_raises_naming_the_failed_check" in out, out[
        -4000:
    ]
    assert (
        "PASSED test_vendor_conformance.py::test_a_descriptor_made_in_a_function_is_refused_with_the_reason"
        in out
    )
    assert "2 failed" not in out and "1 failed, 3 passed, 1 skipped" in out, out[-2000:]


@pytest.mark.full
def test_a_malformed_descriptor_is_a_descriptor_error_naming_it():
    with pytest.raises(DescriptorError) as err:
        check_backend("suite_0_4_0.mixed:MISNAMED", checks="AOT-1")
    assert (
        "suite_0_4_0.mixed:MISNAMED: operators {'relu': ['float32']}: operator 'relu' is not a schema name"
        in str(err.value)
    )


def test_unknown_checks_are_refused_before_anything_runs():
    with pytest.raises(ValueError, match=r"checks 'AOT-99' selects unknown AOT-99"):
        parametrize_with_checks("suite_0_2_0.narrowed:NARROWED", checks="AOT-99")


def test_a_descriptor_object_is_found_at_its_module_attribute():
    from suite_0_2_0.narrowed import DESCRIPTOR, NARROWED

    assert backend_spec(NARROWED) == "suite_0_2_0.narrowed:NARROWED"
    assert backend_spec(DESCRIPTOR) == "suite_0_2_0.narrowed:DESCRIPTOR"
    with pytest.raises(TypeError, match="not a int"):
        backend_spec(3)
