"""The model tier judges by a declared compute precision (``computes_in``): a backend that computes float32 in
bfloat16 gets a few of bfloat16's roundings at each output's scale, not float32's bound, and the row says so;
a result far outside that still mismatches."""

from __future__ import annotations

import torch

from conformance.models.architectures import MODELS
from conformance.models.runner import DECLARED_PRECISION_EPS, declared_precision, measure, tolerance
from conformance.operators import OperatorSupport
from conformance.operators.spec import EPS

RESNET = MODELS["resnet18"] if "resnet18" in MODELS else next(iter(MODELS.values()))


def test_the_least_precise_declared_precision_decides():
    ops = OperatorSupport.float32("aten::relu") | OperatorSupport.float32("aten::mm").computing_in("float16")
    assert declared_precision(ops) == "float16"
    ops |= OperatorSupport.float32("aten::add.Tensor").computing_in("bfloat16")
    assert declared_precision(ops) == "bfloat16"
    assert declared_precision(OperatorSupport.float32("aten::relu")) is None


def test_a_declared_precision_widens_the_models_bound_and_nothing_else_does():
    assert tolerance(RESNET, OperatorSupport.float32("aten::relu")) == (RESNET.rtol, RESNET.atol, None)
    rtol, atol, precision = tolerance(RESNET, OperatorSupport.float32("aten::relu").computing_in("bfloat16"))
    assert precision == "bfloat16" and rtol == atol == DECLARED_PRECISION_EPS * EPS["bfloat16"] > RESNET.rtol


def test_bf16_rounding_passes_under_the_declared_bound_and_a_wrong_result_does_not():
    torch.manual_seed(0)
    expected = torch.randn(1, 1000)
    rounded = expected.to(torch.bfloat16).to(torch.float32)
    rtol, atol, _ = tolerance(RESNET, OperatorSupport.float32("aten::relu").computing_in("bfloat16"))
    assert (
        measure([rounded], [expected], RESNET.rtol, RESNET.atol)[2] is not None
    )  # float32's bound: mismatch
    assert measure([rounded], [expected], rtol, atol)[2] is None
    wrong = expected.clone()
    wrong[0, 7] += 1.0
    assert "output 0 differs" in measure([wrong], [expected], rtol, atol)[2]
