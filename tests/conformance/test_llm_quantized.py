"""The quantized row of the LLM tier (``llm_quantized``, conformance/models/llm_runner.py): the decoder quantized
with the backend's own quantizer decodes as the converted model does in eager PyTorch; a runtime whose
quantized kernels are a step off is a token mismatch naming the step; a backend without a quantizer gets the
row not run, saying so, without a vendor process; a token chosen at a near tie of eager PyTorch's logits is
sound, one chosen with logits past the tolerance is not. A backend that takes only quantized programs
(``quantized.every_sample``) gets its ``llm`` row quantized first, judged against the converted model, and its
``llm_quantized`` row not run, as the same program."""

from __future__ import annotations

import dataclasses
import re

import pytest
import torch
from suite_runner import BROKEN

from conformance.context import Context
from conformance.descriptor import load_descriptor
from conformance.models import decoder
from conformance.models.decoder import PROMPT, STEPS
from conformance.models.llm_runner import (
    NAME,
    NO_QUANTIZER,
    QUANTIZED,
    SAME_PROGRAM,
    judge_decoding,
    llm_result,
)
from conformance.models.runner import DECLARED_PRECISION_EPS, parse_models
from conformance.results.result_tables import MODELS as MODEL_TABLE
from conformance.results.result_tables import NA, OK, model_state
from conformance.results.table_text import render
from conformance.vendor.process import VendorProcess
from conformance.vendor.records import pack


def test_a_backend_without_a_quantizer_gets_the_row_not_run_and_starts_no_vendor_process():
    descriptor = dataclasses.replace(load_descriptor("ReferenceBackend"), quantized=None)
    ctx = Context(descriptor, "ReferenceBackend", timeout=60)
    starts = VendorProcess.starts
    try:
        row = llm_result(ctx, quantized=True)
        assert VendorProcess.starts == starts  # decided from the descriptor alone
    finally:
        ctx.close()
    assert row["model"] == QUANTIZED and row["result"] == "not_run" and row["reason"] == NO_QUANTIZER, row
    assert model_state(row) == NA
    assert QUANTIZED in (parse_models("all") or ())
    line = render(MODEL_TABLE, [row], width=1000)[1]
    assert line.split()[0] == QUANTIZED and "declares no quantizer" in line


def test_a_backend_that_takes_only_quantized_programs_gets_the_quantized_row_not_run_as_the_same_program():
    reference = load_descriptor("ReferenceBackend")
    every = dataclasses.replace(
        reference, quantized=dataclasses.replace(reference.quantized, every_sample=True)
    )
    ctx = Context(every, "ReferenceBackend", timeout=60)
    starts = VendorProcess.starts
    try:
        row = llm_result(ctx, quantized=True)
        assert VendorProcess.starts == starts  # decided from the descriptor alone
    finally:
        ctx.close()
    assert row["model"] == QUANTIZED and row["result"] == "not_run" and row["reason"] == SAME_PROGRAM, row
    assert row["quantizer"] is None and model_state(row) == NA


@pytest.mark.full  # a quantization, a lowering and 32 decoding calls (50 s at a load of 3)
def test_a_backend_that_takes_only_quantized_programs_gets_its_llm_row_quantized_first(monkeypatch):
    monkeypatch.syspath_prepend(str(BROKEN))
    from broken_backends.quantized_samples import EVERY_SAMPLE

    ctx = Context(EVERY_SAMPLE, "broken_backends.quantized_samples:EVERY_SAMPLE", timeout=600)
    try:
        row = llm_result(ctx)
    finally:
        ctx.close()
    assert row["model"] == NAME and row["result"] == "matched", row
    assert row["quantizer"] == "reference_backend.quantizer.ReferenceQuantizer", row
    assert row["logits_scale"] > 0 and row["atol"] >= row["logits_scale"], row  # max_steps 1.0
    assert row["tokens"] == row["expected_tokens"] and row["matched_tokens"] == STEPS, row
    # the tokens compared with are the converted model's: the float decoder's differ
    with torch.no_grad():
        float_decoder = decoder.make()
        floats = decoder.greedy(float_decoder, float_decoder, decoder.prompt()).tokens
    assert row["expected_tokens"] != floats, row
    for method in row["methods"].values():
        assert method["delegated_nodes"] > 0, method
    assert "quantized_decomposed::dequantize_per_tensor" not in row["cpu_ops"], row["cpu_ops"]


@pytest.mark.parametrize(
    "every_sample", [False, True], ids=["llm_quantized", "llm of a backend that quantizes every sample"]
)
def test_a_quantizer_that_is_not_a_pt2e_quantizer_fails_the_rows_lowering_naming_what_it_returned(
    every_sample,
):
    reference = load_descriptor("ReferenceBackend")
    # returns a dict; with every_sample, the float row is quantized first, so it meets the quantizer too
    quantized = dataclasses.replace(reference.quantized, make_quantizer=dict, every_sample=every_sample)
    ctx = Context(dataclasses.replace(reference, quantized=quantized), timeout=120)  # the object, pickled
    try:
        row = llm_result(ctx, quantized=not every_sample)
    finally:
        ctx.close()
    assert row["result"] == "lowering_failed" and row["quantizer"] is None, row
    assert (
        "quantized.make_quantizer() returned builtins.dict, not a torchao PT2E Quantizer" in row["reason"]
    ), row


def test_the_llm_rows_are_judged_in_the_precision_the_descriptor_declares():
    """As every model row: float32 declared computed in bfloat16 (OpenVINO on a CPU with bf16) widens the
    tolerance to DECLARED_PRECISION_EPS of bfloat16's epsilon, and the row says so."""
    reference = load_descriptor("ReferenceBackend")
    descriptor = dataclasses.replace(
        reference, quantized=None, operators=reference.operators.computing_in("bfloat16")
    )
    ctx = Context(descriptor, "ReferenceBackend", timeout=60)
    try:
        row = llm_result(ctx, quantized=True)  # not run (no quantizer): no vendor process, the bounds are set
    finally:
        ctx.close()
    assert row["rtol"] == row["atol"] == DECLARED_PRECISION_EPS * 2.0**-7, row
    judged = "judged in bfloat16, which the descriptor declares float32 is computed in (computes_in)"
    row = _judged([[0.1, 0.9, 0.2]], [[0.1, 0.9, 0.2]]) | {}
    kept = {"rtol": 0.0, "atol": 0.01, "reason": judged}
    tokens, logits = _decoding([[0.1, 0.9, 0.2]])
    judge_decoding(
        kept, {"tokens": tokens, "logits": logits}, {"tokens": tokens, "logits": logits, "seconds": [0.1]}
    )
    assert kept["result"] == "matched" and kept["reason"] == judged, kept
    assert row["result"] == "matched" and row["reason"] == ""


def _decoding(steps: list[list[float]]) -> tuple[list[int], bytes]:
    """(the greedy tokens, the packed logits) of a run whose step k has the logits ``steps[k]``."""
    logits = [torch.tensor([row]) for row in steps]
    return [int(torch.argmax(t[0])) for t in logits], pack(logits)


def _judged(eager: list[list[float]], backend: list[list[float]], atol: float = 0.01) -> dict:
    row = {"rtol": 0.0, "atol": atol}
    tokens, logits = _decoding(eager)
    chosen, got = _decoding(backend)
    judge_decoding(
        row,
        {"tokens": tokens, "logits": logits},
        {"tokens": chosen, "logits": got, "seconds": [0.1] * len(chosen)},
    )
    return row


def test_a_token_chosen_at_a_near_tie_is_sound_and_one_chosen_past_the_tolerance_is_a_mismatch():
    # Eager's step 2 ties between tokens 0 and 2 (on an int8 grid they tie exactly); the backend, within
    # tolerance of every logit, takes token 2 there: sound, matched up to that step, saying so.
    eager = [[0.1, 0.9, 0.2], [0.5, 0.3, 0.5], [0.9, 0.1, 0.0]]
    near = [[0.1, 0.9, 0.2], [0.495, 0.3, 0.5], [0.1, 0.2, 0.9]]  # after the tie its history differs
    row = _judged(eager, near)
    assert row["result"] == "matched" and row["matched_tokens"] == 1, row
    assert re.match(
        r"step 2 \(decode at position \d+\): the backend chose token 2, eager PyTorch token 0, whose two "
        r"most likely tokens are 0 apart; .*within tolerance \(up to 0.005 off\)",
        row["reason"],
    ), row
    line = render(MODEL_TABLE, [{**row, "model": "llm", "steps": 3, "cpu_ops": {}}], width=1000)[1]
    assert "1/3 tokens as eager, then a near tie" in line
    # The same choice with a logit 0.2 off (20 times the tolerance) is the backend's mismatch.
    far = [[0.1, 0.9, 0.2], [0.3, 0.3, 0.5], [0.1, 0.2, 0.9]]
    row = _judged(eager, far)
    assert row["result"] == "mismatch" and row["reason"].startswith("step 2 (decode at position"), row
    assert "that step's logits differ by up to 0.2" in row["reason"]
    # Every token the same but one step's logits off: the logits decide.
    off = [[0.1, 0.9, 0.2], [0.5, 0.3, 0.45], [0.9, 0.1, 0.0]]
    row = _judged(eager, off)
    assert row["result"] == "mismatch" and row["reason"].startswith("step 2 (decode at position"), row


@pytest.mark.full  # a quantization, a lowering and 32 decoding calls (20 s)
def test_the_reference_backend_decodes_its_quantized_decoder_as_the_converted_model():
    ctx = Context(load_descriptor("ReferenceBackend"), "ReferenceBackend", timeout=600)
    try:
        row = llm_result(ctx, quantized=True)
    finally:
        ctx.close()
    assert row["result"] == "matched", row
    assert row["quantizer"] == "reference_backend.quantizer.ReferenceQuantizer", row
    assert row["logits_scale"] > 0 and row["atol"] >= row["logits_scale"], row  # max_steps 1.0
    assert row["tokens"] == row["expected_tokens"] and row["matched_tokens"] == STEPS
    for method in row["methods"].values():
        assert method["delegated_nodes"] > 0, method
    assert "quantized_decomposed::dequantize_per_tensor" not in row["cpu_ops"], row["cpu_ops"]
    assert model_state(row) == OK


@pytest.mark.full  # a quantization, a lowering and the decoding calls up to the mismatch (25 s)
def test_a_runtime_a_step_off_is_a_token_mismatch_of_the_quantized_row(broken_runtime_dir, monkeypatch):
    monkeypatch.syspath_prepend(str(BROKEN))
    monkeypatch.setenv("BROKEN_RUNTIME_DIR", str(broken_runtime_dir))
    from broken_backends.descriptors import REQUANT_OFF_BY_ONE

    ctx = Context(REQUANT_OFF_BY_ONE, "broken_backends.descriptors:REQUANT_OFF_BY_ONE", timeout=600)
    try:
        row = llm_result(ctx, quantized=True)
    finally:
        ctx.close()
    assert row["result"] == "mismatch", row
    found = re.match(
        r"step (\d+) \((prefill of the prompt|decode at position (\d+))\): the backend chose token",
        row["reason"],
    )
    assert found, row["reason"]
    step = int(found.group(1))
    assert found.group(3) is None or int(found.group(3)) == PROMPT + step - 2
    assert row["matched_tokens"] == step - 1 and row["tokens"][step - 1] != row["expected_tokens"][step - 1]
