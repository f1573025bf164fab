"""A backend that takes only quantized graphs (``quantized.every_sample``): every sample is quantized with the
descriptor's quantizer before any check lowers it, its eager outputs are the converted model's, and the float
cases of the operators it declares in quantized patterns (``OperatorSupport.in_quantized_patterns``) are
quantized by that quantizer too. Shown on the reference backend with ReferenceQuantizer
(tests/conformance/broken/broken_backends/quantized_samples.py), and with a partitioner that, as Arm's, claims
only what its quantizer marked in node metadata."""

from __future__ import annotations

import dataclasses
import types

import pytest
from suite_runner import BROKEN, results_by_id, run_suite

from conformance.operators import OperatorSupport, runner
from conformance.outcomes import CheckFailed
from conformance.vendor.process import VendorProcess
from reference_backend.conformance import DESCRIPTOR as REFERENCE

BACKENDS = "broken_backends.quantized_samples"
#: Start-up of a vendor process (torch and executorch imported) and a lowering, on a busy machine.
TIMEOUT_S = 600
QUANTIZE = ("quantized_decomposed::quantize_per_tensor", "quantized_decomposed::dequantize_per_tensor")


def _claimed_ops(lowering) -> set[str]:
    return {op for record in lowering.records for _node, op, _tag in record.tagged_ops}


def test_every_sample_is_lowered_quantized_and_the_float_sample_is_kept_for_the_quantized_checks(
    tmp_path, monkeypatch
):
    monkeypatch.syspath_prepend(str(BROKEN))
    quantized = VendorProcess(f"{BACKENDS}:EVERY_SAMPLE", tmp_path / "q")
    plain = VendorProcess("ReferenceBackend", tmp_path / "f")
    try:
        lowered = quantized.call("lower", "mlp", "default", None, None, what="lower", timeout=TIMEOUT_S)
        assert lowered.error is None, lowered.error
        assert set(QUANTIZE) <= _claimed_ops(lowered)  # the partitioner met a converted graph
        float_lowered = plain.call("lower", "mlp", "default", None, None, what="lower", timeout=TIMEOUT_S)
        assert not set(QUANTIZE) & _claimed_ops(float_lowered)
        # the eager outputs the runtime checks compare with are the converted model's, not the float model's
        q_sample = quantized.call("sample", "mlp", what="sample", timeout=TIMEOUT_S)
        f_sample = plain.call("sample", "mlp", what="sample", timeout=TIMEOUT_S)
        assert q_sample["inputs"] == f_sample["inputs"]
        assert q_sample["expected"] != f_sample["expected"]
        # the quantized checks still quantize the float sample themselves, once
        flow = quantized.call("quantized_flow", "quant_net", what="QNT", timeout=TIMEOUT_S)
        assert flow["delegates"] >= 1 and not flow["leftovers"]
    finally:
        quantized.close()
        plain.close()


def test_a_whole_run_of_an_integer_only_backend_judges_its_samples_and_quantized_cases(tmp_path):
    code, report, output = run_suite(
        tmp_path,
        f"{BACKENDS}:EVERY_SAMPLE",
        "--checks",
        "AOT-3,AOT-4,RT-3,RT-4,STATE-1,MTH-1,OPS-1,OPS-2,QNT-3",
        "--ops",
        "aten::add.Tensor",
        "--models",
        "resnet",
    )
    assert report is not None, output[-3000:]
    by_id = results_by_id(report)
    for check in ("AOT-3", "AOT-4", "RT-3", "RT-4", "STATE-1", "MTH-1", "OPS-1", "OPS-2", "QNT-3"):
        assert by_id[check]["outcome"] == "passed", (check, by_id[check])
    assert code == 0, output[-3000:]
    assert "quantized_decomposed::quantize_per_tensor" in by_id["STATE-1"]["reason"]  # delegated quantized
    (row,) = report["operators"]
    names = {c["case"] for c in row["case_results"]}
    # the float cases, quantized; neither the hand-made quantized patterns nor what cannot be calibrated
    assert {"rank2", "bcast_row", "large"} <= names
    assert not names & {"inf_nan", "subnormal"}
    assert all(c["outcome"] in ("passed", "excluded") for c in row["case_results"]), row
    # the model tier's architectures are quantized too, and judged against the converted model
    (model,) = report["models"]
    assert model["quantizer"].endswith(".ReferenceQuantizer"), model
    assert model["output_scale"] > 0 and model["atol"] >= model["output_scale"], model
    assert model["result"] == "matched" and model["delegated_nodes"] > 0, model


def test_the_stateful_program_keeps_the_quantizers_node_metadata_for_a_partitioner_that_reads_it(tmp_path):
    # MARKED_ONLY's partitioner claims only the nodes its quantizer marked in node.meta["custom"], as Arm's do:
    # STATE-1 calls the converted sample from a module of its own, and a plain call drops that metadata (then
    # nothing was delegated and STATE-1 was not applicable, as on Arm's TOSA INT row before). Its program's
    # boundary quantize/dequantize stay on CPU: the second run, given the lowering by the cache, must still
    # have their kernels when it loads the program.
    cache = {"EXECUTORCH_CONFORMANCE_CACHE_DIR": str(tmp_path / "cache")}
    for run in ("lowered", "cached"):
        code, report, output = run_suite(
            tmp_path / run, f"{BACKENDS}:MARKED_ONLY", "--checks", "STATE-1", env=cache
        )
        assert report is not None, output[-3000:]
        assert (report["options"]["cached_lowerings"] > 0) == (run == "cached"), report["options"]
        state = results_by_id(report)["STATE-1"]
        assert state["outcome"] == "passed", (run, state)
        assert code == 0, output[-3000:]
        delegated = state["reason"].split("ReferenceBackend delegated ")[1].split(";")[0].split(", ")
        assert {"aten::linear", "quantized_decomposed::quantize_per_tensor"} <= set(delegated), state[
            "reason"
        ]
        assert "the buffer update ran on CPU (aten::index_put)" in state["reason"]


def test_a_quantizer_that_is_not_one_fails_the_checks_that_lower_a_sample_with_the_reason(tmp_path):
    code, report, output = run_suite(tmp_path, f"{BACKENDS}:NOT_A_QUANTIZER", "--checks", "AOT-3,RT-3")
    assert report is not None, output[-3000:]
    assert code != 0
    for check in ("AOT-3", "RT-3"):
        result = results_by_id(report)[check]
        assert result["outcome"] == "failed", result
        assert (
            "quantized.every_sample is set, but quantized.make_quantizer() returned builtins.object"
            in (result["reason"])
        )
    assert "Traceback" not in output


def _ctx(descriptor):
    return types.SimpleNamespace(descriptor=descriptor, operator_selection=None)


def test_which_cases_an_operator_declared_in_quantized_patterns_gets():
    declared = OperatorSupport.float32("quantized_decomposed::quantize_per_tensor") | (
        OperatorSupport.in_quantized_patterns("aten::relu", without=("channels_last",))
    )
    base = dataclasses.replace(REFERENCE, supported_ops=frozenset(), operators=declared)

    def cases(descriptor):
        return {(c.op, c.name): excluded for c, excluded in runner.planned(_ctx(descriptor))}

    # another backend: only the corpus's quantized patterns (under quantize_per_tensor); no float relu case
    plain = cases(base)
    assert ("quantized_decomposed::quantize_per_tensor", "relu") in plain
    assert not [k for k in plain if k[0] == "aten::relu"]
    # every sample quantized: relu's float cases, to be quantized by the backend's quantizer, except those a
    # quantizer cannot calibrate on; the hand-made patterns are not its input
    every = cases(
        dataclasses.replace(base, quantized=dataclasses.replace(REFERENCE.quantized, every_sample=True))
    )
    assert not [k for k in every if k[0] == "quantized_decomposed::quantize_per_tensor"]
    assert ("aten::relu", "rank2") in every and every[("aten::relu", "channels_last")] is True
    assert ("aten::relu", "inf_nan") not in every and ("aten::relu", "subnormal") not in every
    # no quantizer: no quantized case at all
    assert not cases(dataclasses.replace(base, quantized=None))


def test_a_quantized_only_declaration_crosses_to_the_vendor_process_and_back():
    declared = OperatorSupport.in_quantized_patterns(
        "aten::relu", without=("channels_last",), reason="int only"
    )
    back = OperatorSupport.from_json(declared.to_json())
    assert back["aten::relu"].quantized_only is True
    assert back["aten::relu"].without == ("channels_last",)
    with pytest.raises(ValueError, match="unknown case trait"):
        OperatorSupport.in_quantized_patterns("aten::relu", without=("no_such_trait",))


def test_quantized_flow_refuses_a_non_quantizer_in_the_vendor_process(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BROKEN))
    vendor = VendorProcess(f"{BACKENDS}:NOT_A_QUANTIZER", tmp_path)
    try:
        with pytest.raises(CheckFailed, match="is not a torchao PT2E Quantizer"):
            vendor.call("sample", "mlp", what="sample", timeout=TIMEOUT_S)
    finally:
        vendor.close()
