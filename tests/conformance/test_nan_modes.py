"""Declared NaN semantics (C-OPS-2, conformance/operators/nan_modes.py): what nan_mode "ignore" computes, which
declarations are refused, and OPS-2 judging a backend by what it declares, on the reference backend and on
ExecuTorch's XNNPACK."""

from __future__ import annotations

import math
import re

import pytest
import torch
from suite_runner import results_by_id, run_suite

from conformance.operators import OperatorSupport
from conformance.operators.nan_modes import IGNORE, SELECTING, ignoring_nan, nan_mode_problem
from conformance.operators.support import OperatorDeclaration

NAN = math.nan


def test_maximum_and_minimum_leave_a_nan_operand_out():
    a = torch.tensor([NAN, -2.5, NAN, -math.inf, 1.0])
    b = torch.tensor([0.0, NAN, NAN, NAN, 2.0])
    (got,) = ignoring_nan("aten::maximum", torch.maximum, [a, b])
    assert got[:2].tolist() == [0.0, -2.5] and math.isnan(got[2]) and got[3:].tolist() == [-math.inf, 2.0]
    (low,) = ignoring_nan("aten::minimum", torch.minimum, [a, b])
    assert low[:2].tolist() == [0.0, -2.5] and math.isnan(low[2]) and low[3:].tolist() == [-math.inf, 1.0]


def test_max_pooling_is_nan_only_where_the_whole_window_is():
    x = torch.tensor([[[[NAN, NAN, 1.0, NAN], [NAN, NAN, NAN, -math.inf]]]])

    def pool(t):
        return torch.nn.functional.max_pool2d(t, 2, 2)

    (got,) = ignoring_nan("aten::max_pool2d_with_indices", pool, [x])
    assert math.isnan(got[0, 0, 0, 0]) and got[0, 0, 0, 1] == 1.0
    (reduced,) = ignoring_nan("aten::amax", lambda t: torch.amax(t, dim=-1), [x])
    assert reduced[0, 0].tolist() == [1.0, -math.inf]


def test_without_a_nan_or_for_another_operator_there_is_nothing_to_ignore():
    assert ignoring_nan("aten::maximum", torch.maximum, [torch.ones(2), torch.zeros(2)]) is None
    assert ignoring_nan("aten::add.Tensor", torch.add, [torch.tensor([NAN]), torch.ones(1)]) is None
    assert ignoring_nan("aten::maximum", torch.maximum, [torch.ones(2, dtype=torch.int32)] * 2) is None


def test_ignore_is_refused_for_an_operator_that_selects_nothing():
    assert nan_mode_problem("aten::maximum", IGNORE) is None
    assert "aten::add.Tensor, which does not select among its operands" in nan_mode_problem(
        "aten::add.Tensor", IGNORE
    )
    with pytest.raises(ValueError, match=r"aten::add.Tensor, which does not select .*aten::maximum"):
        OperatorSupport.float32("aten::add.Tensor", nan_mode="ignore")
    with pytest.raises(ValueError, match="nan_mode is 'drop', not one of 'propagate', 'ignore'"):
        OperatorDeclaration(nan_mode="drop")
    with pytest.raises(
        ValueError, match="ignoring_nan names aten::minimum, which the declaration does not hold"
    ):
        OperatorSupport.float32("aten::maximum").ignoring_nan("aten::minimum")


def test_the_declaration_crosses_to_the_judge():
    support = OperatorSupport.float32(*sorted(SELECTING)).ignoring_nan("aten::maximum")
    back = OperatorSupport.from_json(support.to_json())
    assert back == support and back["aten::maximum"].nan_mode == IGNORE
    assert back["aten::minimum"].nan_mode == "propagate"


@pytest.mark.full  # a lowering of the operator cases per backend: CI keeps the reference case (tests/long_tier.py)
@pytest.mark.parametrize(
    ("backend", "ops", "pattern"),
    [
        pytest.param(
            "broken_backends.descriptors:DECLARES_NAN_IGNORED",
            "aten::max_pool2d_with_indices",
            r"case 'stress' .*differs from eager PyTorch with its NaN operands left out \(the declared "
            r"nan_mode='ignore'\): NaN at index \(0, 0, 0, 0\) in the runtime only",
            id="reference-propagates",
        ),
        pytest.param(
            "broken_backends.descriptors:XNNPACK_DECLARES_NAN_IGNORED",
            "aten::maximum,aten::minimum",
            r"aten::maximum float32 case 'inf_nan' .*differs from eager PyTorch with its NaN operands left out "
            r"\(the declared nan_mode='ignore'\): NaN at index \(3, 0\) in the runtime only",
            id="xnnpack-order-dependent",
        ),
    ],
)
def test_a_backend_is_judged_by_the_nan_mode_it_declares(tmp_path, backend, ops, pattern):
    code, report, output = run_suite(tmp_path, backend, "--checks", "OPS-2", "--ops", ops)
    assert report is not None, output
    result = results_by_id(report)["OPS-2"]
    assert result["outcome"] == "failed" and re.search(pattern, result["reason"]), result
    assert code == 1
    # the declaration is shown next to the verdict: in the report, on the terminal and on the page
    declared = [f"{op}: NaN ignored" for op in ops.split(",")]
    if "xnnpack" not in backend.lower():
        assert report["backend"]["declared_deviations"] == declared
    else:
        assert set(declared) <= set(report["backend"]["declared_deviations"])
    assert "judged by declared deviations: " + declared[0] in output
    page = (tmp_path / "report.html").read_text()
    assert 'id="declared-deviations"' in page and declared[0] in page


def test_deviations_name_every_declared_difference():
    support = OperatorSupport.float32("aten::maximum", "aten::mm", computes_in="bfloat16").ignoring_nan(
        "aten::maximum"
    ) | OperatorSupport.float32("aten::add.Tensor", tolerance=(0.01, 0.001))
    assert support.deviations() == [
        "aten::maximum: NaN ignored",
        "aten::maximum float32: computed in bfloat16",
        "aten::mm float32: computed in bfloat16",
        "aten::add.Tensor float32: rtol 0.01 atol 0.001",
    ]
    assert OperatorSupport.float32("aten::add.Tensor").deviations() == []
