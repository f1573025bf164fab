"""The LLM tier on the reference backend (conformance/models/llm_runner.py, llm_tasks.py): greedy decoding
with the lowered prefill and decode methods gives eager PyTorch's tokens, and a program whose decode does
not see the cache prefill wrote is a token mismatch naming the step and both tokens."""

from __future__ import annotations

import re

import pytest

from conformance.context import Context
from conformance.descriptor import load_descriptor
from conformance.models.decoder import PROMPT, STEPS
from conformance.models.llm_runner import llm_result
from conformance.results.result_tables import MODELS as MODEL_TABLE
from conformance.results.table_text import render

# The full tier: a vendor process, two lowerings of the decoder and 64 decoding calls (about 40 s at load 3)
pytestmark = pytest.mark.full


@pytest.fixture(scope="module")
def ctx():
    context = Context(load_descriptor("ReferenceBackend"), "ReferenceBackend", timeout=600)
    yield context
    context.close()


def test_the_reference_backend_decodes_as_eager_pytorch(ctx):
    row = llm_result(ctx)
    assert row["result"] == "matched", row
    assert row["tokens"] == row["expected_tokens"] and len(row["tokens"]) == STEPS == row["matched_tokens"]
    assert row["max_abs_error"] is not None and 0 <= row["tolerance_used"] < 1, row
    assert row["tokens_per_s"] > 0 and row["decode_tokens_per_s"] > 0
    assert set(row["methods"]) == {"prefill", "decode"}
    for method in row["methods"].values():
        assert method["delegated_nodes"] > 0 and method["cpu_ops"], method  # the linears in, the rest on CPU
    assert row["nodes"] == sum(m["nodes"] for m in row["methods"].values())
    assert "aten::index_put" in row["cpu_ops"], row["cpu_ops"]  # the cache update is left on CPU
    head, line = render(MODEL_TABLE, [row], width=1000)
    assert "tokens/s" in head and line.split()[:3] == ["llm", "decoder-only", "LLM"]
    assert (
        f"{row['tokens_per_s']:.0f}" in line.split() and f"{STEPS}/{STEPS} tokens as eager; on CPU:" in line
    )


def test_a_decode_that_does_not_see_the_prompts_cache_is_a_token_mismatch(ctx):
    row = llm_result(ctx, shared_state=False)
    assert row["result"] == "mismatch", row
    found = re.match(
        r"step (\d+) \(decode at position (\d+)\): the backend chose token (\d+), eager PyTorch token (\d+) ",
        row["reason"],
    )
    assert found, row["reason"]
    step, position, got, expected = (int(g) for g in found.groups())
    assert step >= 2 and position == PROMPT + step - 2
    assert got == row["tokens"][step - 1] != expected == row["expected_tokens"][step - 1]
    assert (
        row["matched_tokens"] == step - 1 and row["tokens"][: step - 1] == row["expected_tokens"][: step - 1]
    )
