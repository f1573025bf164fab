"""Each operator defect is caught by the right OPS check, naming the operator, dtype, case shapes and
error; the reference backend passes both checks."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def run(tmp_path: Path, backend: str, *extra: str) -> tuple[int, dict, str]:
    cmd = [
        sys.executable,
        "-m",
        "conformance.cli",
        "run",
        "--backend",
        backend,
        "--report-dir",
        str(tmp_path),
        "-n",
        "1",
        "--checks",
        "OPS",
        *extra,
    ]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    path = tmp_path / "report.json"
    assert path.exists(), proc.stdout + proc.stderr
    return proc.returncode, json.loads(path.read_text()), proc.stdout + proc.stderr


# descriptor, --ops, the failing check, what its reason must say, the failing (op, dtype) row
CASES = {
    "NEVER_CLAIMS_DECLARED": (
        "aten::relu",
        "OPS-1",
        r"aten::relu float32 case 'rank0' \(float32\[scalar\] normal\): left on ExecuTorch's CPU kernels: aten::relu",
        ("aten::relu", "float32"),
    ),
    "INT32_NOT_CLAIMED": (
        "aten::mul.Tensor",
        "OPS-1",
        (
            r"aten::mul.Tensor int32 case 'rank0' \(int32\[scalar\] normal, int32\[scalar\] normal\): left on "
            r"ExecuTorch's CPU kernels: aten::mul.Tensor"
        ),
        ("aten::mul.Tensor", "int32"),
    ),
    "RUNTIME_LACKS_DECLARED": (
        "aten::mul.Tensor",
        "OPS-1",
        (
            r"aten::mul.Tensor int64 case 'rank0' \(int64\[scalar\] normal, int64\[scalar\] normal\): lowering failed: "
            r".*SerializationError: .*not a float32, int8 or int32 tensor"
        ),
        ("aten::mul.Tensor", "int64"),
    ),
    "CHANNELS_LAST_CLAIMED": (
        "aten::add.Tensor,aten::relu",
        "OPS-2",
        (
            r"aten::add.Tensor float32 case 'channels_last_mixed' \(float32\[2x3x4x5\] normal, channels-last, "
            r"float32\[2x3x4x5\] normal\): output 0 differs from eager PyTorch: max abs difference"
        ),
        ("aten::add.Tensor", "float32"),
    ),
}


@pytest.mark.full
@pytest.mark.parametrize("name", list(CASES))
def test_operator_defect_is_caught(tmp_path, name):
    ops, failing, pattern, (op, dtype) = CASES[name]
    code, report, output = run(tmp_path, f"broken_operators:{name}", "--ops", ops)
    results = {r["id"]: r for r in report["results"]}
    assert results[failing]["outcome"] == "failed", (results[failing], output[-3000:])
    assert re.search(pattern, results[failing]["reason"]), results[failing]["reason"]
    assert code == 1 and report["verdict"] == "not conformant"
    rows = {(r["op"], r["dtype"]): r for r in report["operators"]}
    row = rows[(op, dtype)]
    assert row["first_failing"] is not None, row
    assert re.search(pattern.split(r"\): ", 1)[1], row["first_failing"]["reason"]), row
    # The other declared operators and dtypes have no failing case.
    assert all(r["first_failing"] is None for key, r in rows.items() if key != (op, dtype)), rows
    assert "first failing case" in output  # the terminal's per-operator table
    # Every case of the row has its outcome; the first failing one is the row's first_failing.
    outcomes = {c["case"]: c for c in row["case_results"]}
    assert (
        len(outcomes) == row["cases"]
        and outcomes[row["first_failing"]["case"]]["reason"] == (row["first_failing"]["reason"])
    )
    # junit-operators.xml: one testcase per case, the failing ones with their reasons.
    junit = ET.parse(tmp_path / "junit-operators.xml")  # noqa: S314  our own output
    cases = {(c.get("classname"), c.get("name")): c for c in junit.iter("testcase")}
    assert set(cases) == {
        (f"{r['op']} {r['dtype']}", c["case"]) for r in rows.values() for c in r["case_results"]
    }
    failure = cases[(f"{op} {dtype}", row["first_failing"]["case"])].find("failure")
    assert failure is not None and re.search(pattern.split(r"\): ", 1)[1], failure.text), failure
    assert all(c.find("failure") is None for key, c in cases.items() if key[0] != f"{op} {dtype}")
    assert "models" not in report and "models" not in report["options"]  # the model tier runs only when asked


@pytest.mark.full
def test_reference_backend_passes_every_declared_operator(tmp_path):
    """Also the model tier, in the same run (one suite start-up): every standard model is partly delegated
    and matches eager PyTorch (tests/operators/test_models.py tests the tier's defects)."""
    code, report, output = run(tmp_path, "ReferenceBackend", "--models")
    models = {m["model"]: m for m in report["models"]}
    assert list(models) == ["resnet", "mobilenet_v2", "vit", "m5", "llm", "llm_quantized"], models
    for m in models.values():
        assert m["result"] == "matched", m
        assert 0 < m["delegated_nodes"] < m["nodes"] and m["delegates"] > 0, m
        assert m["delegated_fraction"] == round(m["delegated_nodes"] / m["nodes"], 4), m
        assert sum(m["cpu_ops"].values()) == m["nodes"] - m["delegated_nodes"], m
        assert m["max_abs_error"] is not None and m["tolerance_used"] < 0.1, m
    # What the reference runtime lacks stays on CPU: batch norm, attention's bmm, layer norm, 1-D convs; what
    # blob format 1.4 added (pools, hardtanh, softmax, mean, permute, view) is delegated.
    assert set(models["resnet"]["cpu_ops"]) == {"aten::_native_batch_norm_legit_no_training"}
    assert "aten::_native_batch_norm_legit_no_training" in models["mobilenet_v2"]["cpu_ops"]
    assert "aten::hardtanh" not in models["mobilenet_v2"]["cpu_ops"]
    assert {"aten::bmm", "aten::native_layer_norm"} <= set(models["vit"]["cpu_ops"])
    assert not {"aten::_softmax", "aten::permute_copy"} & set(models["vit"]["cpu_ops"])
    assert "aten::convolution" in models["m5"]["cpu_ops"]
    # The LLM tier: greedy decoding gives eager PyTorch's tokens; the cache update and attention's bmm on CPU.
    assert (
        models["llm"]["tokens"] == models["llm"]["expected_tokens"] and models["llm"]["matched_tokens"] == 32
    )
    assert {"aten::index_put", "aten::bmm"} <= set(models["llm"]["cpu_ops"])
    # Its quantized row: the reference quantizer's decoder decodes as the converted model does.
    assert models["llm_quantized"]["quantizer"] == "reference_backend.quantizer.ReferenceQuantizer"
    assert models["llm_quantized"]["tokens"] == models["llm_quantized"]["expected_tokens"]
    assert report["options"]["models"] == "all"
    assert "models (report-only, not counted for the verdict):" in output
    assert re.search(r"resnet +\S.*? +\d+/\d+ \(\d+%\) +\d+ +\S+ \(\S+%\) +- +matched", output), output
    results = {r["id"]: r for r in report["results"]}
    assert results["OPS-1"]["outcome"] == "passed", results["OPS-1"]
    assert results["OPS-2"]["outcome"] == "passed", results["OPS-2"]
    rows = {(r["op"], r["dtype"]) for r in report["operators"]}
    assert rows == {
        (op, "float32")
        for op in (
            "aten::add.Tensor",
            "aten::sub.Tensor",
            "aten::mul.Tensor",
            "aten::relu",
            "aten::linear",
            "aten::convolution",
            "quantized_decomposed::quantize_per_tensor",
            "quantized_decomposed::dequantize_per_tensor",
            "quantized_decomposed::dequantize_per_channel",
            # blob format 1.4 (reference backend 0.4.0)
            "aten::div.Tensor",
            "aten::sigmoid",
            "aten::tanh",
            "aten::clamp",
            "aten::hardtanh",
            "aten::max_pool2d_with_indices",
            "aten::avg_pool2d",
            "aten::_softmax",
            "aten::mean.dim",
            "aten::permute_copy",
            "aten::view_copy",
        )
    }
    # dequantize has no corpus cases of its own (the quantized cases of quantize_per_tensor and the QNT checks
    # exercise it) and the reason says so; quantize_per_tensor has the quantized cases.
    assert (
        "no corpus cases for quantized_decomposed::dequantize_per_tensor, "
        "quantized_decomposed::dequantize_per_channel (quantize/dequantize: the quantized cases of "
        "quantize_per_tensor and the QNT checks exercise them)" in results["OPS-1"]["reason"]
    )
    # OPS-2 says only what it found: OPS-1's notes are not repeated.
    assert "no corpus cases" not in results["OPS-2"]["reason"], results["OPS-2"]
    assert "need not be delegated" not in results["OPS-2"]["reason"], results["OPS-2"]
    assert "not delegated were not run (OPS-1 says why)" in results["OPS-2"]["reason"]
    # the cases OPS-1 says were delegated are the delegated ones, not those declared unsupported too
    delegated = sum(row["delegated"] for row in report["operators"])
    assert (
        f"; {delegated} cases of {len(report['operators'])} operator/dtype pairs delegated"
        in (results["OPS-1"]["reason"])
    ), (delegated, results["OPS-1"]["reason"])
    for row in report["operators"]:
        if row["op"].startswith("quantized_decomposed::dequantize"):
            assert row["cases"] == 0, row
            continue
        assert row["cases"] > 0 and row["passed"] == row["ran"] == row["delegated"], row
        assert row["first_failing"] is None, row
    assert code == 0
    suite = ET.parse(tmp_path / "junit-operators.xml").getroot().find("testsuite")  # noqa: S314  our own output
    # one testcase per case and one per pair without cases; the declared-unsupported cases are skipped
    cases = sum(r["cases"] for r in report["operators"])
    excluded = sum(c["outcome"] == "excluded" for r in report["operators"] for c in r["case_results"])
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == (str(cases + 2), "0", "0")
    assert suite.get("skipped") == str(excluded + 2)
    assert all(c["outcome"] in ("passed", "excluded") for r in report["operators"] for c in r["case_results"])
    rows = {r["op"]: r for r in report["operators"]}
    assert rows["quantized_decomposed::quantize_per_tensor"]["cases"] == 6  # relu, add (3), linear, conv2d
    assert rows["aten::relu"]["cases"] == 16  # 14 static (one of subnormals), 2 dynamic


@pytest.mark.full
def test_dynamic_and_quantized_cases_not_claimed_are_caught(tmp_path):
    """A partitioner that claims only static float operators fails OPS-1 on the corpus's dynamic cases of relu
    (which name their bounds) and on the quantized cases (naming the quantize their output comes from; the
    dequantize nodes feed the delegate, where the trace stops); relu's static cases pass."""
    code, report, _output = run(
        tmp_path,
        "broken_operators:STATIC_FLOAT_ONLY",
        "--ops",
        "quantized_decomposed::quantize_per_tensor,aten::relu,aten::add.Tensor,aten::linear,aten::convolution",
        "--checks",
        "OPS-1",
    )
    (result,) = report["results"]
    assert result["id"] == "OPS-1" and result["outcome"] == "failed", result
    rows = {r["op"]: r for r in report["operators"]}
    relu, quantize = rows["aten::relu"], rows["quantized_decomposed::quantize_per_tensor"]
    assert relu["first_failing"]["case"] == "dynamic", relu
    assert re.fullmatch(r"left on ExecuTorch's CPU kernels: aten::relu", relu["first_failing"]["reason"]), (
        relu
    )
    assert quantize["delegated"] == 0 and quantize["cases"] == 6, quantize
    assert quantize["first_failing"] == {
        "case": "relu",
        "reason": "left on ExecuTorch's CPU kernels: quantized_decomposed::quantize_per_tensor",
    }, quantize
    # 2 dynamic cases of relu, 3 of add, 2 of linear, the 6 quantized ones.
    assert result["reason"].startswith("13 of "), result["reason"]
    assert code == 1


def test_ops_selection_is_validated(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "conformance.cli",
        "run",
        "--backend",
        "ReferenceBackend",
        "--report-dir",
        str(tmp_path),
        "--ops",
        "aten::exp",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "undeclared aten::exp" in proc.stderr and "aten::add.Tensor" in proc.stderr
