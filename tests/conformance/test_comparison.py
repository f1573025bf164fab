"""conformance.comparison.assert_outputs_close: the comparison every numeric verdict rests on. What
passes, what fails, and what the failure message names (sample, output, shapes, worst element)."""

from __future__ import annotations

import re

import pytest
import torch

from conformance.comparison import assert_outputs_close, closeness
from conformance.outcomes import CheckFailed

INF, NAN = float("inf"), float("nan")


def fails(actual, expected, rtol=1e-3, atol=1e-5, **kwargs) -> str:
    """The message of the CheckFailed that the comparison raises."""
    with pytest.raises(CheckFailed) as caught:
        assert_outputs_close("sample 'm'", actual, expected, rtol, atol, **kwargs)
    return str(caught.value)


@pytest.mark.parametrize(
    ("actual", "expected", "rtol", "atol"),
    [
        ([1.0, 2.0], [1.0, 2.0], 0.0, 0.0),
        ([1.0 + 9e-6, -2.0], [1.0, -2.0], 0.0, 1e-5),  # within atol
        ([1000.9], [1000.0], 1e-3, 0.0),  # within rtol * |expected|
        ([NAN, 1.0], [NAN, 1.0], 0.0, 0.0),  # NaN matches NaN
        ([INF, -INF], [INF, -INF], 1e-3, 1e-5),  # an infinity matches the same infinity
    ],
)
def test_outputs_within_the_tolerance_pass(actual, expected, rtol, atol):
    assert_outputs_close("m", [torch.tensor(actual)], [torch.tensor(expected)], rtol, atol)


def test_empty_and_zero_dimensional_outputs_compare():
    assert_outputs_close(
        "m", [torch.zeros(0, 3), torch.tensor(2.0)], [torch.zeros(0, 3), torch.tensor(2.0)], 0, 0
    )
    message = fails([torch.tensor(1.0)], [torch.tensor(2.0)])
    assert "max abs difference 1 at index () (runtime 1, eager 2)" in message


def test_just_outside_atol_fails_and_names_the_element_and_the_tolerance():
    message = fails([torch.tensor([1.0, 2.0 + 1e-3])], [torch.tensor([1.0, 2.0])], rtol=0.0, atol=1e-4)
    assert message.startswith(
        "sample 'm' output 0 differs from eager PyTorch: max abs difference 0.001 at index (1,)"
    )
    assert "(runtime 2.001, eager 2) exceeds the declared tolerance (rtol=0.0, atol=0.0001)" in message


def test_the_element_furthest_out_of_its_bound_is_named_beside_the_largest_difference():
    # 1000 -> 1000.5 is within rtol * 1000; 0 -> 0.2 is far outside atol.
    message = fails([torch.tensor([1000.5, 0.2])], [torch.tensor([1000.0, 0.0])])
    assert "max abs difference 0.5 at index (0,) (runtime 1000.5, eager 1000)" in message
    assert (
        "the bound is exceeded most at index (1,) (runtime 0.2, eager 0: difference 0.2, bound 1e-05)"
        in message
    )


@pytest.mark.parametrize(
    ("actual", "expected", "where"),
    [
        ([NAN, 1.0], [1.0, 1.0], "(0,) in the runtime only"),
        ([1.0, 1.0], [1.0, NAN], "(1,) in eager PyTorch only"),
    ],
)
def test_a_nan_on_one_side_only_fails(actual, expected, where):
    message = fails([torch.tensor(actual)], [torch.tensor(expected)], rtol=1.0, atol=1.0)
    assert message == f"sample 'm' output 0 differs from eager PyTorch: NaN at index {where}"


@pytest.mark.parametrize(
    ("actual", "expected", "shown"),
    [
        ([1.0, INF], [1.0, 2.0], "(runtime inf, eager 2)"),
        ([1.0, 2.0], [1.0, INF], "(runtime 2, eager inf)"),
        ([1.0, INF], [1.0, -INF], "(runtime inf, eager -inf)"),
    ],
)
def test_an_infinity_against_anything_else_fails(actual, expected, shown):
    message = fails([torch.tensor(actual)], [torch.tensor(expected)], rtol=1.0, atol=1.0)
    assert f"max abs difference inf at index (1,) {shown}" in message


def test_integer_outputs_compare_exactly_beyond_float64_precision():
    big = 2**53
    assert_outputs_close("m", [torch.tensor([big + 1])], [torch.tensor([big + 1])], 0, 0)
    message = fails([torch.tensor([big, big + 1])], [torch.tensor([big, big])], rtol=0.0, atol=0.0)
    assert f"max abs difference 1 at index (1,) (runtime {big + 1}, eager {big})" in message


def test_integer_and_bool_values_are_shown_as_they_are():
    extremes = fails([torch.tensor([-(2**63)])], [torch.tensor([2**63 - 1])], rtol=0.0, atol=0.0)
    assert f"max abs difference {2**64 - 1} at index (0,) (runtime {-(2**63)}, eager {2**63 - 1})" in extremes
    flags = fails([torch.tensor([True, False])], [torch.tensor([True, True])], rtol=0.0, atol=0.0)
    assert "max abs difference 1 at index (1,) (runtime False, eager True)" in flags


def test_complex_outputs_compare_their_imaginary_parts():
    message = fails([torch.tensor([1 + 1j])], [torch.tensor([1 + 2j])])
    assert "max abs difference 1 at index (0,) (runtime 1+1j, eager 1+2j)" in message


def test_low_precision_outputs_compare_in_their_own_dtype():
    half = torch.tensor([1.0, 2.5], dtype=torch.bfloat16)
    assert_outputs_close("m", [half], [half.clone()], 0, 0)
    message = fails([torch.tensor([1.0, 2.0], dtype=torch.bfloat16)], [half])
    assert "max abs difference 0.5 at index (1,) (runtime 2, eager 2.5)" in message


def test_a_count_mismatch_names_both_counts():
    message = fails([torch.zeros(2)], [torch.zeros(2), torch.zeros(2)])
    assert message == "sample 'm': 1 outputs, eager PyTorch gives 2"


def test_a_shape_mismatch_names_both_shapes():
    message = fails([torch.zeros(2, 3)], [torch.zeros(3, 2)])
    assert message == "sample 'm' output 0: shape (2, 3), eager (3, 2)"


def test_a_dtype_mismatch_names_both_dtypes_even_for_equal_values():
    message = fails([torch.zeros(2, dtype=torch.float64)], [torch.zeros(2)])
    assert message == "sample 'm' output 0: dtype torch.float64, eager torch.float32"


def test_an_output_that_is_not_a_tensor_fails():
    message = fails([[0.0, 0.0]], [torch.zeros(2)])
    assert message == "sample 'm' output 0: the runtime returned list, not a tensor"


def test_outputs_are_numbered_from_start_and_the_reference_is_named():
    message = fails(
        [torch.zeros(2), torch.ones(2)],
        [torch.zeros(2), torch.zeros(2)],
        reference="the XNNPACK runtime",
        start=3,
    )
    assert re.match(
        r"sample 'm' output 4 differs from the XNNPACK runtime: .*\(runtime 1, XNNPACK runtime 0\)", message
    )


def test_closeness_gives_the_worst_difference_and_the_share_of_its_bound_used():
    e = [torch.tensor([1.0, 100.0, float("nan"), float("inf")])]
    # 0.01 off at 1.0 (bound 0.01 + 0.01 * 1: half used); 0.5 off at 100 (bound 1.01: a little less); NaN
    # and inf equal to themselves
    worst, used = closeness([torch.tensor([1.01, 100.5, float("nan"), float("inf")])], e, 0.01, 0.01)
    assert worst == pytest.approx(0.5) and used == pytest.approx(0.5, rel=1e-4)
    # a NaN against a number is infinitely far, and outputs of another shape are left to assert_outputs_close
    assert closeness([torch.tensor([1.0, float("nan"), 0.0, 0.0])], e, 0.01, 0.01) == (
        float("inf"),
        float("inf"),
    )
    assert closeness([torch.zeros(3)], e, 0.01, 0.01) == (0.0, 0.0)
    assert closeness([torch.tensor([5, 7], dtype=torch.int64)], [torch.tensor([5, 9])], 0.0, 0.0) == (
        2.0,
        float("inf"),
    )
