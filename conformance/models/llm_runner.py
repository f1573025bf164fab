"""The parent side of the LLM tier: the ``llm`` row of the report's ``models`` section.

The vendor process lowers the decoder (``llm_tasks.lower_llm``, cached) and then decodes greedily with
the loaded program (``llm_tasks.run_llm``). The row is ``matched`` when the runtime chose the same
``STEPS`` tokens as eager PyTorch and every step's logits are within the model tier's tolerance (judged
with ``conformance.probes``); a different token is a ``mismatch`` naming the step, its position and
both tokens. The row also holds the logits' worst error (over the steps both runs shared), tokens per
second, and where the operators of each method ran. It never raises for what the backend did.
"""

from __future__ import annotations

import math
from typing import Any

from conformance.context import Context
from conformance.models.architectures import MODELS
from conformance.models.decoder import PROMPT, STEPS
from conformance.models.results import LOWERING_FAILED, MATCHED, MISMATCH, NOT_DELEGATED, RUN_FAILED
from conformance.models.runner import NOTHING_DELEGATED, measure, new_row, timed
from conformance.outcomes import CheckFailed, NotApplicable
from conformance.probes import assert_outputs_close
from conformance.vendor.task_registry import LOWER_LLM, RUN_LLM
from conformance.vendor.vendor_records import unpack

NAME = "llm"


def where(k: int) -> str:
    """Step ``k`` (from 0) of greedy decoding, in words: '3 (decode at position 9)'."""
    return f"{k + 1} ({'prefill of the prompt' if k == 0 else f'decode at position {PROMPT + k - 1}'})"


def llm_result(ctx: Context, shared_state: bool = True) -> dict[str, Any]:
    """The row of the LLM tier; never raises for what the backend did. ``shared_state`` False lowers the
    program with a cache per method (``llm_tasks.lower_llm``: the tests' broken case)."""
    row = new_row(MODELS[NAME])
    row.update(
        steps=STEPS,
        expected_tokens=None,
        tokens=None,
        matched_tokens=None,
        tokens_per_s=None,
        decode_tokens_per_s=None,
        methods=None,
    )
    return timed(row, lambda: _fill(ctx, row, shared_state))


def _place(row: dict[str, Any], methods: dict[str, dict[str, Any]]) -> None:
    """The row's node counts: both methods' together; each method's own in ``methods``."""
    row["methods"] = methods
    for key in ("nodes", "delegated_nodes", "delegates"):
        row[key] = sum(m[key] for m in methods.values())
    for key in ("other_backends", "cpu_ops"):
        merged: dict[str, int] = {}
        for m in methods.values():
            for op, n in m[key].items():
                merged[op] = merged.get(op, 0) + n
        row[key] = dict(sorted(merged.items(), key=lambda kv: (-kv[1], kv[0])))
    row["delegated_fraction"] = round(row["delegated_nodes"] / row["nodes"], 4) if row["nodes"] else 0.0


def _fill(ctx: Context, row: dict[str, Any], shared_state: bool) -> None:
    try:
        lowered = ctx.call(
            LOWER_LLM, shared_state, what="export and lowering of the LLM decoder (prefill and decode)"
        )
    except CheckFailed as exc:
        row["result"], row["reason"] = LOWERING_FAILED, str(exc)
        return
    _place(row, lowered["methods"])
    row["expected_tokens"] = lowered["tokens"]
    if not row["delegated_nodes"]:
        row["result"], row["reason"] = NOT_DELEGATED, NOTHING_DELEGATED
        return
    if ctx.target is not None:
        row["reason"] = "not run: the LLM tier decodes in the vendor process of this host, not on a target"
        return
    try:
        ctx.require_runtime()
        ran = ctx.call(
            RUN_LLM,
            lowered["pte"],
            lowered["prompt"],
            "the LLM decoder",
            what="greedy decoding of the LLM decoder",
        )
    except NotApplicable as exc:
        row["reason"] = f"not run: {exc}"
        return
    except CheckFailed as exc:
        row["result"], row["reason"] = RUN_FAILED, str(exc)
        return
    if "error" in ran:
        row["result"], row["reason"] = RUN_FAILED, f"{ran['step']} failed: {ran['error']}"
        return
    _judge(row, lowered, ran)


def _judge(row: dict[str, Any], lowered: dict[str, Any], ran: dict[str, Any]) -> None:
    model = MODELS[NAME]
    expected, tokens = lowered["tokens"], ran["tokens"]
    row["tokens"] = tokens
    seconds = ran["seconds"]
    row["tokens_per_s"] = round(len(tokens) / sum(seconds), 1) if sum(seconds) > 0 else None
    rest = sum(seconds[1:])
    row["decode_tokens_per_s"] = round((len(tokens) - 1) / rest, 1) if rest > 0 else None
    first = next((k for k, (a, e) in enumerate(zip(tokens, expected)) if a != e), None)
    row["matched_tokens"] = len(expected) if first is None else first
    # The logits are compared where both runs had the same tokens before: up to and with the first mismatch.
    shared = len(expected) if first is None else first + 1
    actual_logits, expected_logits = unpack(ran["logits"])[:shared], unpack(lowered["logits"])[:shared]
    worst, used, _ = measure(actual_logits, expected_logits, model.rtol, model.atol)
    row["max_abs_error"] = worst if math.isfinite(worst) else None
    row["tolerance_used"] = round(used, 4) if math.isfinite(used) else None
    if first is not None:
        step_worst, _, _ = measure(actual_logits[first:], expected_logits[first:], model.rtol, model.atol)
        row["result"] = MISMATCH
        row["reason"] = (
            f"step {where(first)}: the backend chose token {tokens[first]}, eager PyTorch token "
            f"{expected[first]} ({first} token{'' if first == 1 else 's'} before it matched; that step's logits differ by "
            f"up to "
            f"{step_worst:.3g})"
        )
        return
    if len(tokens) != len(expected):
        row["result"] = MISMATCH
        row["reason"] = f"the backend gave {len(tokens)} tokens, eager PyTorch {len(expected)}"
        return
    for k, (a, e) in enumerate(zip(actual_logits, expected_logits)):
        scale = max(1.0, float(e.abs().max())) if e.numel() else 1.0
        try:
            assert_outputs_close(f"step {where(k)}: logits", [a], [e], model.rtol, model.atol * scale)
        except CheckFailed as exc:
            row["result"], row["reason"] = MISMATCH, str(exc)
            return
    row["result"], row["reason"] = MATCHED, ""
