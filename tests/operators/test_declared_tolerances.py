"""Tolerances a backend declares per operator and dtype (OperatorDeclaration.tolerances, computes_in):
how they are given and refused, and what OPS-2 makes of them on a real backend that computes float32
in bfloat16 (OpenVINO's CPU plugin on a CPU with bf16) and on a defect they must not hide."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from test_operator_defects import run

from conformance.operators import OperatorSupport
from conformance.operators.spec import ACCUMULATE


def test_a_tolerance_is_given_per_dtype_and_merged():
    support = OperatorSupport.of(("float32", "float16"), "aten::mm", tolerance={"float16": (0.01, 0.02)})
    assert support["aten::mm"].tolerance("float16") == (0.01, 0.02)
    assert support["aten::mm"].tolerance("float32") is None
    wider = support.with_tolerance(0.1, 0.2, dtype="float32")
    assert wider["aten::mm"].tolerance("float32") == (0.1, 0.2)
    assert wider["aten::mm"].tolerance("float16") == (0.01, 0.02)
    both = OperatorSupport.float32("aten::mm", tolerance=(0.5, 0.25))
    assert both["aten::mm"].tolerances == (("float32", 0.5, 0.25),)


def test_a_precision_is_declared_for_float_dtypes():
    support = OperatorSupport.float32("aten::mm", "aten::relu").computing_in("bfloat16")
    assert {support[op].precision("float32") for op in support} == {"bfloat16"}
    assert support["aten::mm"].precision("float16") is None
    # the corpus's own tolerance for bfloat16 grows with the reduction length, as for float32
    assert ACCUMULATE.bounds("bfloat16", 4.0, 64)[1] > ACCUMULATE.bounds("float32", 4.0, 64)[1] * 1000


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        (
            {"tolerance": {"float16": (0.1, 0.1)}},
            r"declared for 'float16', but the operator is declared for float32 only",
        ),
        (
            {"tolerance": (float("nan"), 0.1)},
            r"the rtol declared for float32 is nan, not a finite number >= 0",
        ),
        ({"tolerance": (0.1, -1.0)}, r"the atol declared for float32 is -1.0, not a finite number >= 0"),
        ({"tolerance": ((0.1,),)}, r"a tolerance is \(rtol, atol\) for a dtype"),
        ({"computes_in": "int8"}, r"computed in 'int8': give a float dtype no more precise than float32"),
        (
            {"computes_in": {"float16": "bfloat16"}},
            r"computes_in names 'float16', but the operator is declared",
        ),
    ],
)
def test_a_malformed_declaration_is_refused_saying_what_is_wrong(kwargs, says):
    with pytest.raises(ValueError, match=says):
        OperatorSupport.float32("aten::mm", **kwargs)


@pytest.mark.full
def test_a_declared_precision_does_not_hide_a_defect(tmp_path):
    _code, report, output = run(
        tmp_path, "broken_operators:CHANNELS_LAST_CLAIMED_BF16", "--ops", "aten::add.Tensor"
    )
    results = {r["id"]: r for r in report["results"]}
    assert results["OPS-2"]["outcome"] == "failed", output[-2000:]
    assert re.search(
        r"aten::add.Tensor float32 case 'channels_last_mixed' .*differs from eager PyTorch",
        results["OPS-2"]["reason"],
    )


def _bf16_cpu() -> bool:
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    return bool(re.search(r"\b(avx512_bf16|amx_bf16)\b", text))


needs_bf16_openvino = pytest.mark.skipif(
    importlib.util.find_spec("openvino") is None or not _bf16_cpu(),
    reason="needs the scoreboard extra (openvino) and a CPU with bf16, where OpenVINO computes float32 in bf16",
)

#: the OpenVINO descriptor with its operators declared without the bfloat16 precision
OPENVINO_AT_FLOAT32 = "scoreboard_variants:OPENVINO_AT_FLOAT32"


@needs_bf16_openvino
def test_openvino_mm_fails_at_float32_tolerance_and_passes_declared_in_bfloat16(tmp_path, monkeypatch):
    variants = tmp_path / "variants"
    variants.mkdir()
    (variants / "scoreboard_variants.py").write_text(
        "import dataclasses\n"
        "from conformance.operators import OperatorSupport\n"
        "from scoreboard.openvino.descriptor import DESCRIPTOR\n"
        "OPENVINO_AT_FLOAT32 = dataclasses.replace(DESCRIPTOR, operators=OperatorSupport(\n"
        "    {op: dataclasses.replace(d, computes_in=()) for op, d in DESCRIPTOR.operators.items()}))\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(variants))
    _code, report, output = run(tmp_path / "f32", OPENVINO_AT_FLOAT32, "--ops", "aten::mm")
    results = {r["id"]: r for r in report["results"]}
    assert results["OPS-2"]["outcome"] == "failed", output[-2000:]
    assert re.search(
        r"aten::mm float32 case '\w+' .*output 0 differs from eager PyTorch", results["OPS-2"]["reason"]
    )
    _code, report, output = run(
        tmp_path / "bf16", "scoreboard.openvino.descriptor:DESCRIPTOR", "--ops", "aten::mm"
    )
    results = {r["id"]: r for r in report["results"]}
    assert results["OPS-2"]["outcome"] == "passed", (results["OPS-2"], output[-2000:])
    assert re.search(
        r"\d+ cases of 1 operator/dtype pairs were judged with the wider tolerances the descriptor declares "
        r"\(float32 computed in bfloat16\)",
        results["OPS-2"]["reason"],
    ), results["OPS-2"]["reason"]
