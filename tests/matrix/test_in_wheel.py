"""The committed table of the executorch wheels' own backend libraries (matrix/results/
in_wheel_abi.json): rendered in the matrix as committed, saying what was measured, and
(full tier) regenerated from the downloaded wheels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.in_wheel_abi import DATA, WHEEL_RELEASES, generate
from matrix.in_wheel_render import cell, html_section, markdown

REPO = Path(__file__).resolve().parents[2]


def _data() -> dict:
    return json.loads(DATA.read_text())


def _row(backend: str, release: str) -> dict:
    return next(r for r in _data()["rows"] if r["backend"] == backend and r["release"] == release)


def test_the_matrix_shows_the_committed_table():
    readme = (REPO / "matrix/README.md").read_text()
    lines = markdown(DATA.parent)
    assert lines and all(line in readme for line in lines), (
        "matrix/README.md is stale: executorch-conformance matrix render"
    )
    page = (REPO / "matrix/index.html").read_text()
    assert html_section(DATA.parent) in page, (
        "matrix/index.html is stale: matrix render --html matrix/index.html"
    )


def test_every_backend_of_every_wheel_has_a_row():
    rows = {(r["backend"], r["release"]) for r in _data()["rows"]}
    assert rows == {(b, r) for b in ("XNNPACK", "OpenVINO", "QNN") for r in WHEEL_RELEASES}
    assert _row("OpenVINO", "1.4.1")["how"] == "not shipped"


def test_the_1_5_libraries_serve_both_1_5_releases_and_nothing_older():
    for backend in ("XNNPACK", "OpenVINO", "QNN"):
        for release in ("1.5.0", "1.5.1"):
            verdicts = _row(backend, release)["verdicts"]
            assert verdicts["1.5.0"]["verdict"] == verdicts["1.5.1"]["verdict"] == "binary compatible"
            assert cell(verdicts["1.4.1"]).startswith("rebuild: no ")
            assert "libexecutorch.so" in verdicts["1.4.1"]["reasons"][0]


def test_the_1_3_and_1_4_qnn_library_is_that_release_s_registry_and_a_private_one_elsewhere():
    for release in ("1.3.1", "1.4.1"):
        row = _row("QNN", release)
        assert row["runtime_copy"]["kind"] == "carries its own registry"
        for target, v in row["verdicts"].items():
            expected = "is this release's runtime" if target == release else "carries its own registry"
            assert v["verdict"] == expected, (release, target, v)


def test_a_missing_symbol_names_the_library_expected_to_export_it():
    """XNNPACK of 1.4.1 (in the runtime extension) on 1.2.0: the symbol came from the registry library."""
    reasons = _row("XNNPACK", "1.4.1")["verdicts"]["1.2.0"]["reasons"]
    assert any(
        r.startswith("missing symbol executorch::runtime::etensor::TensorImpl::TensorImpl(")
        and r.endswith(
            "(not exported by executorch 1.2.0's executorch/backends/qualcomm/libqnn_executorch_backend.so)"
        )
        for r in reasons
    ), reasons


@pytest.mark.full
def test_the_table_is_what_the_wheels_say_now():
    """Downloads the four wheels (build/wheels, about 70 MB, cached) and judges them again."""
    committed = _data()
    fresh = generate(REPO / "build" / "wheels", committed["against"])
    assert fresh["wheels"] == committed["wheels"]
    assert fresh["rows"] == committed["rows"], "regenerate: python -m matrix.in_wheel_abi"
