"""The parent side of the LLM tier: the ``llm`` row of the report's ``models`` section.

The vendor process lowers the decoder (``llm_tasks.lower_llm``, cached) and then decodes greedily with
the loaded program (``llm_tasks.run_llm``). The row is ``matched`` when the runtime chose the same
``STEPS`` tokens as eager PyTorch and every step's logits are within the model tier's tolerance (judged
with ``conformance.comparison``); a different token is a ``mismatch`` naming the step, its position and
both tokens, unless the backend's logits at that step are still within tolerance: then eager PyTorch's
two most likely tokens nearly tie there, either choice is sound, and the row is ``matched`` up to that
step with a note saying so (``near_tie``). The row also holds the logits' worst error (over the steps both runs shared), tokens per
second, and where the operators of each method ran. It never raises for what the backend did.

On a target (``--target``) the runner executes the methods (``conformance.targets.runtime``) but cannot
take each step's token from the logits, so decoding there is teacher-forced: each decode call is fed
eager PyTorch's token of the step before. Up to the first step whose token differs that is the same
decoding, and nothing past it is judged, so the verdict is the same; ``decoding`` in the row says which.

The ``llm_quantized`` row is the same decoder quantized with the backend's own quantizer (the descriptor's
``quantized``), judged against the converted model in eager PyTorch, as QNT-3 judges a quantized sample: the
same tokens, and logits within the model's tolerance or ``QuantizedSupport.max_steps`` steps of the logits'
quantization scale, whichever is larger. A backend that declares no quantizer gets the row ``not_run``,
saying so.

A backend that takes only quantized programs (``BackendDescriptor.quantizes_every_sample``, as Arm's TOSA INT
and Ethos-U flows) is given no float decoder: its ``llm`` row is the decoder quantized first, with the same
quantization, lowering and judgement as ``llm_quantized`` (the row adds ``quantizer`` and ``logits_scale``), as
the model tier quantizes each architecture for it. Its ``llm_quantized`` row would be that very program again,
so it is ``not_run``, naming the ``llm`` row, and no vendor process is started for it.
"""

from __future__ import annotations

import math
from typing import Any

from conformance.comparison import assert_outputs_close
from conformance.context import Context
from conformance.models.architectures import MODELS
from conformance.models.decoder import PROMPT, STEPS
from conformance.models.results import LOWERING_FAILED, MATCHED, MISMATCH, NOT_DELEGATED, RUN_FAILED
from conformance.models.runner import NOTHING_DELEGATED, measure, new_row, timed, tolerance
from conformance.outcomes import CheckFailed, NotApplicable, SuiteCannotRun
from conformance.vendor.records import unpack
from conformance.vendor.task_registry import LOWER_LLM, RUN_LLM

NAME = "llm"
QUANTIZED = "llm_quantized"
#: The reason of the quantized row of a backend without a quantizer.
NO_QUANTIZER = (
    "not run: the descriptor declares no quantizer (quantized=QuantizedSupport(...)); the float row 'llm' "
    "judges the decoder"
)
#: The reason of the quantized row of a backend whose ``llm`` row is already quantized (module docstring).
SAME_PROGRAM = (
    "not run: the same program as the row 'llm': the backend takes only quantized programs "
    "(quantized.every_sample), so 'llm' is the decoder quantized with its quantizer, judged against the "
    "converted model"
)


def where(k: int) -> str:
    """Step ``k`` (from 0) of greedy decoding, in words: '3 (decode at position 9)'."""
    return f"{k + 1} ({'prefill of the prompt' if k == 0 else f'decode at position {PROMPT + k - 1}'})"


def llm_result(ctx: Context, shared_state: bool = True, quantized: bool = False) -> dict[str, Any]:
    """The row of the LLM tier (``quantized``: the ``llm_quantized`` row); never raises for what the backend
    did. ``shared_state`` False lowers the program with a cache per method (``llm_tasks.lower_llm``: the
    tests' broken case). For a backend that takes only quantized programs, the ``llm`` row is the quantized
    decoder and the ``llm_quantized`` row is not run (module docstring)."""
    model = MODELS[QUANTIZED if quantized else NAME]
    row = new_row(model)
    # As for every model: a float32 result declared computed in a lower precision is judged in it.
    row["rtol"], row["atol"], precision = tolerance(model, ctx.descriptor.operators)
    if precision is not None:
        row["reason"] = (
            f"judged in {precision}, which the descriptor declares float32 is computed in (computes_in)"
        )
    quantized_first = ctx.descriptor.quantizes_every_sample
    if quantized or quantized_first:
        row.update(quantizer=None, logits_scale=None)
    if quantized:
        if ctx.descriptor.quantized is None:
            row["reason"] = NO_QUANTIZER
            return row
        if quantized_first:
            row["reason"] = SAME_PROGRAM
            return row
    row.update(
        steps=STEPS,
        expected_tokens=None,
        tokens=None,
        matched_tokens=None,
        tokens_per_s=None,
        decode_tokens_per_s=None,
        methods=None,
        decoding=None,
    )
    return timed(row, lambda: _fill(ctx, row, shared_state, quantized or quantized_first))


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


def _fill(ctx: Context, row: dict[str, Any], shared_state: bool, quantized: bool) -> None:
    what = "quantization, export and lowering" if quantized else "export and lowering"
    try:
        lowered = ctx.call(
            LOWER_LLM, shared_state, quantized, what=f"{what} of the LLM decoder (prefill and decode)"
        )
    except CheckFailed as exc:
        row["result"], row["reason"] = LOWERING_FAILED, str(exc)
        return
    support = ctx.descriptor.quantized
    if quantized and support is not None:
        row["quantizer"], row["logits_scale"] = lowered["quantizer"], lowered["logits_scale"]
        if row["logits_scale"] is not None and support.max_steps * row["logits_scale"] > row["atol"]:
            row["atol"] = support.max_steps * row["logits_scale"]
    _place(row, lowered["methods"])
    row["expected_tokens"] = lowered["tokens"]
    if not row["delegated_nodes"]:
        row["result"], row["reason"] = NOT_DELEGATED, NOTHING_DELEGATED
        return
    # The runner on a target cannot take each step's token from the logits: it is fed eager PyTorch's.
    forced = lowered["tokens"] if ctx.target is not None else None
    row["decoding"] = "greedy" if forced is None else "teacher-forced"
    try:
        ctx.require_runtime()
        ran = ctx.call(
            RUN_LLM,
            lowered["pte"],
            lowered["prompt"],
            "the LLM decoder",
            forced,
            what=f"{row['decoding']} decoding of the LLM decoder",
        )
    except (NotApplicable, SuiteCannotRun) as exc:
        row["reason"] = f"not run: {exc}"
        return
    except CheckFailed as exc:
        row["result"], row["reason"] = RUN_FAILED, str(exc)
        return
    if "error" in ran:
        row["result"], row["reason"] = RUN_FAILED, f"{ran['step']} failed: {ran['error']}"
        return
    judge_decoding(row, lowered, ran)


def near_tie(k: int, chosen: int, expected: int, logits: Any, off: float) -> str:
    """The note of a row whose decoding left eager PyTorch's at step ``k`` with the backend's logits within
    tolerance there (``off``: their largest difference): only a near tie in eager PyTorch's logits lets that
    happen, and either choice is then sound (a quantized model's logits, on an int8 grid, tie exactly)."""
    top = sorted((float(v) for v in logits.flatten()), reverse=True)[:2]
    margin = top[0] - top[1] if len(top) == 2 else 0.0
    return (
        f"step {where(k)}: the backend chose token {chosen}, eager PyTorch token {expected}, whose two most "
        f"likely tokens are {margin:.3g} apart; the backend's logits there are within tolerance (up to "
        f"{off:.3g} off), so this is a near tie either choice of which is sound: decoding was compared up to "
        f"there"
    )


def judge_decoding(row: dict[str, Any], lowered: dict[str, Any], ran: dict[str, Any]) -> None:
    """Fills ``row``'s result, reason and figures from eager's decoding (``lowered``) and the backend's
    (``ran``), within the row's ``rtol`` and ``atol`` (module docstring)."""
    rtol, atol = row["rtol"], row["atol"]
    judged = row.get("reason", "")  # "judged in bfloat16 ..." where the descriptor declares so, else empty
    also = f"; {judged}" if judged else ""
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
    worst, used, _ = measure(actual_logits, expected_logits, rtol, atol)
    row["max_abs_error"] = worst if math.isfinite(worst) else None
    row["tolerance_used"] = round(used, 4) if math.isfinite(used) else None
    tie = ""
    if first is not None:
        step_worst, _, beyond = measure(actual_logits[first:], expected_logits[first:], rtol, atol)
        if beyond is not None:
            row["result"] = MISMATCH
            row["reason"] = (
                f"step {where(first)}: the backend chose token {tokens[first]}, eager PyTorch token "
                f"{expected[first]} ({first} token{'' if first == 1 else 's'} before it matched; that step's "
                f"logits differ by up to {step_worst:.3g}){also}"
            )
            return
        tie = near_tie(first, tokens[first], expected[first], expected_logits[first], step_worst)
    elif len(tokens) != len(expected):
        row["result"] = MISMATCH
        row["reason"] = f"the backend gave {len(tokens)} tokens, eager PyTorch {len(expected)}{also}"
        return
    for k, (a, e) in enumerate(zip(actual_logits, expected_logits)):
        scale = max(1.0, float(e.abs().max())) if e.numel() else 1.0
        try:
            assert_outputs_close(f"step {where(k)}: logits", [a], [e], rtol, atol * scale)
        except CheckFailed as exc:
            row["result"], row["reason"] = MISMATCH, f"{exc}{also}"
            return
    row["result"], row["reason"] = MATCHED, "; ".join(x for x in (tie, judged) if x)
