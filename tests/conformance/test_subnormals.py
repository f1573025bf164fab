"""Declared subnormal semantics (C-OPS-2, conformance/operators/subnormals.py): what flushing computes, the
corpus's subnormal cases, which declarations are refused, and OPS-2 judging a runtime that computes with
flush-to-zero and denormals-are-zero on by what its descriptor declares."""

from __future__ import annotations

import re

import pytest
import torch
from suite_runner import results_by_id, run_suite

from conformance.operators import OperatorSupport, corpus
from conformance.operators.spec import _pow2_pool, _subnormal_pool
from conformance.operators.subnormals import FLUSHED, KEPT, flush, flushing_subnormals, has_subnormal
from conformance.operators.support import OperatorDeclaration

TINY = torch.finfo(torch.float32).tiny


def test_flushing_reads_a_subnormal_operand_as_a_zero_of_its_sign():
    x = torch.tensor([TINY / 4, -TINY / 4, TINY, 0.0, 1.0])
    flushed = flush(x)
    assert flushed.tolist() == [0.0, -0.0, TINY, 0.0, 1.0]
    assert torch.signbit(flushed[1]) and not torch.signbit(flushed[0])
    (root,) = flushing_subnormals(torch.sqrt, [x.abs()])
    assert root[0] == 0.0 and torch.sqrt(x.abs())[0] > 1e-20  # eager keeps it: sqrt(2.9e-39) = 5.4e-20
    assert flushing_subnormals(torch.sqrt, [torch.ones(3)]) is None
    assert flushing_subnormals(torch.neg, [torch.ones(3, dtype=torch.int32)]) is None


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_the_value_pools_hold_subnormals_and_scales_that_make_them_normal(dtype):
    pool = _subnormal_pool(dtype)
    assert has_subnormal(pool) and bool((pool == 0).sum() == 0)
    info = torch.finfo(pool.dtype)
    scaled = pool.to(torch.float64).abs() * _pow2_pool(dtype).to(torch.float64).abs().max()
    assert bool((scaled[pool.abs() < info.tiny] >= info.tiny).all())  # every subnormal scales to a normal


def test_every_special_elementwise_operator_has_a_subnormal_case_that_flushing_fails():
    case = next(c for c in corpus.cases("aten::mul.Tensor", "float32") if c.name == "subnormal")
    assert case.traits == {"subnormal"}
    module, inputs = case.make()
    (eager,) = [module(*inputs)]
    (flushed,) = flushing_subnormals(module, list(inputs))
    rtol, atol = case.tolerance.bounds("float32")
    assert not torch.allclose(eager, flushed, rtol=rtol, atol=atol)  # the case can tell the two apart
    ops = {c.op for op in corpus.operators() for c in corpus.cases(op, "float32") if "subnormal" in c.traits}
    assert {"aten::sqrt", "aten::log", "aten::div.Tensor", "aten::ceil"} <= ops


def test_bad_declarations_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="subnormals is 'zero', not one of 'kept', 'flushed'"):
        OperatorDeclaration(subnormals="zero")
    with pytest.raises(
        ValueError, match="flushing_subnormals names aten::sqrt, which the declaration does not hold"
    ):
        OperatorSupport.float32("aten::mul.Tensor").flushing_subnormals("aten::sqrt")


def test_the_declaration_crosses_to_the_judge_and_is_a_declared_deviation():
    support = (
        OperatorSupport.float32("aten::mul.Tensor", "aten::sqrt")
        | OperatorSupport({"aten::eq.Tensor": ["int32"]})
    ).flushing_subnormals()
    assert support["aten::sqrt"].subnormals == FLUSHED and support["aten::eq.Tensor"].subnormals == KEPT
    back = OperatorSupport.from_json(support.to_json())
    assert back == support
    assert support.deviations() == ["aten::mul.Tensor: subnormals flushed", "aten::sqrt: subnormals flushed"]
    one = OperatorSupport.float32("aten::mul.Tensor", "aten::sqrt").flushing_subnormals("aten::sqrt")
    assert one.deviations() == ["aten::sqrt: subnormals flushed"]


OPS = "aten::mul.Tensor,aten::div.Tensor"


def _ops2(tmp_path, broken_runtime_dir, descriptor: str) -> tuple[int, dict, dict]:
    """(exit code, report, OPS-2's result) of OPS-2 on the subnormal cases of mul and div; the run's output
    is kept in tmp_path/output."""
    code, report, output = run_suite(
        tmp_path,
        f"broken_backends.descriptors:{descriptor}",
        "--checks",
        "OPS-2",
        "--ops",
        OPS,
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir)},
    )
    (tmp_path / "output").write_text(output)
    assert report is not None, output
    return code, report, results_by_id(report)["OPS-2"]


@pytest.mark.full  # a lowering of the operator cases per declaration: CI keeps the undeclared one (tests/long_tier.py)
def test_an_undeclared_flush_fails_ops2_on_the_subnormal_cases(tmp_path, broken_runtime_dir):
    code, report, result = _ops2(tmp_path, broken_runtime_dir, "FLUSHES_SUBNORMALS")
    assert result["outcome"] == "failed" and code == 1, result
    assert re.search(r"aten::(mul|div)\.Tensor float32 case 'subnormal'", result["reason"]), result
    failing = {
        c["key"] for o in report["operators"] for c in o["case_results"] if c["outcome"].startswith("failed")
    }
    assert failing == {"aten::mul.Tensor|float32|subnormal", "aten::div.Tensor|float32|subnormal"}, failing


@pytest.mark.full
def test_a_declared_flush_passes_and_is_shown_next_to_the_verdict(tmp_path, broken_runtime_dir):
    code, report, result = _ops2(tmp_path, broken_runtime_dir, "FLUSHES_SUBNORMALS_DECLARED")
    output = (tmp_path / "output").read_text()
    assert result["outcome"] == "passed" and code == 0, result
    assert (
        "2 cases holding subnormal operands of aten::div.Tensor, aten::mul.Tensor matched only with"
        in result["reason"]
    )
    assert "aten::mul.Tensor: subnormals flushed" in report["backend"]["declared_deviations"]
    assert "judged by declared deviations: " in output and "subnormals flushed" in output


def test_an_accuracy_in_ulp_is_a_tolerance_of_each_float_dtype_shown_in_ulp():
    support = OperatorSupport.of(
        ("float32", "float16", "int32"), "aten::exp", "aten::add.Tensor"
    ).with_accuracy(16, ops=["aten::exp"])
    assert support["aten::exp"].tolerance("float32") == (16 * 2**-23, 16 * 2**-23)
    assert support["aten::exp"].tolerance("float16") == (16 * 2**-10, 16 * 2**-10)
    assert support["aten::exp"].tolerance("int32") is None and support["aten::add.Tensor"].tolerances == ()
    assert support.deviations() == ["aten::exp float16: 16 ULP", "aten::exp float32: 16 ULP"]
    for bad in (0, -1, float("nan"), True):
        with pytest.raises(ValueError, match=r"ulps is .*, not a finite number > 0"):
            support.with_accuracy(bad)
    with pytest.raises(ValueError, match="'int32' is not a floating-point dtype"):
        support.with_accuracy(4, dtype="int32")
