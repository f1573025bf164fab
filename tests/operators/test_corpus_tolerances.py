"""Every corpus case's tolerance is a finite, non-negative (rtol, atol), whatever its inputs hold: a NaN or
an infinity among a case's inputs once made a per-term tolerance NaN, and OPS-2 stopped with "the check
itself failed" on XNNPACK and OpenVINO (the scoreboard)."""

from __future__ import annotations

import math

import pytest
import torch

from conformance.operators import tasks
from conformance.operators.corpus import cases, operators


def _all_cases():
    return [c for op in operators().values() for dtype in op.dtypes for c in cases(op.op, dtype)]


def test_every_case_has_a_finite_tolerance():
    checked = 0
    for c in _all_cases():
        if c.tolerance.steps:
            continue
        module, inputs = c.make()
        with torch.no_grad():
            out = module(*inputs)
        first = out[0] if isinstance(out, (tuple, list)) else out
        dtype = str(first.dtype).removeprefix("torch.")
        magnitude = tasks._magnitude(module, inputs) if c.tolerance.per_term else 1.0
        rtol, atol = c.tolerance.bounds(dtype, magnitude, c.reduction)
        assert math.isfinite(magnitude) and magnitude >= 0, (c.describe(), magnitude)
        assert math.isfinite(rtol) and rtol >= 0 and math.isfinite(atol) and atol >= 0, (
            c.describe(),
            rtol,
            atol,
        )
        checked += 1
    assert checked > 500  # the whole corpus, not a part of it


@pytest.mark.parametrize("special", [math.nan, math.inf, -math.inf])
def test_a_non_finite_input_leaves_the_magnitude_finite(special):
    """The magnitude of a K-term sum is that of its finite results: a NaN or an infinity in an input
    gives a non-finite result, compared exactly, and never a NaN or infinite tolerance for the others."""
    linear = torch.nn.Linear(4, 3)
    x = torch.ones(2, 4)
    x[0, 1] = special
    with torch.no_grad():  # the finite row: |W| @ |1| + |b|, in float64
        finite_row = (
            linear.weight.double().abs() @ torch.ones(4, dtype=torch.float64) + linear.bias.double().abs()
        )
    assert tasks._magnitude(linear, [x]) == pytest.approx(float(finite_row.max()), rel=1e-12)
    assert math.isfinite(tasks._magnitude(linear, [torch.full((2, 4), special)]))
