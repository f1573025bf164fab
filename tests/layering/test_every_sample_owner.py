"""Whether the suite quantizes every sample of a backend has one owner,
``BackendDescriptor.quantizes_every_sample``: no module outside ``conformance/descriptor.py`` reads
``quantized.every_sample`` itself, so that the sample checks, the operator runner, the vendor's operator
tasks and the model tier cannot disagree about which backends take only quantized graphs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from project_trees import ROOT, python_modules

SCANNED = ("conformance", "reference_backend/python", "kit/backend_kit", "scoreboard", "matrix", "benchmarks")
OWNER = ROOT / "conformance" / "descriptor.py"


def reads_of_every_sample(path: Path) -> list[int]:
    """Lines of ``path`` that read an attribute named ``every_sample`` (setting it by keyword is no read)."""
    tree = ast.parse(path.read_bytes(), str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "every_sample" and isinstance(node.ctx, ast.Load)
    ]


def modules() -> list[Path]:
    return python_modules(*SCANNED)


def test_the_owner_is_found_by_the_scan():
    assert reads_of_every_sample(OWNER), "the owner must read the field, or the scan finds nothing"


def test_only_the_descriptor_reads_every_sample():
    copies = {
        p.relative_to(ROOT).as_posix(): lines
        for p in modules()
        if p != OWNER and (lines := reads_of_every_sample(p))
    }
    assert copies == {}, f"ask descriptor.quantizes_every_sample instead of quantized.every_sample: {copies}"


@pytest.mark.parametrize(
    ("quantized", "expected"),
    [
        pytest.param(None, False, id="no quantized support"),
        pytest.param({"every_sample": False}, False, id="quantized checks only"),
        pytest.param({"every_sample": True}, True, id="every sample quantized"),
    ],
)
def test_quantizes_every_sample(quantized, expected):
    import dataclasses

    from conformance.descriptor import QuantizedSupport
    from reference_backend.conformance import DESCRIPTOR

    support = None
    if quantized is not None:
        support = QuantizedSupport(DESCRIPTOR.sample_models[0].name, lambda: None, **quantized)
    assert dataclasses.replace(DESCRIPTOR, quantized=support).quantizes_every_sample is expected
