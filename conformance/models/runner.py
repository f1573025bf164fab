"""The parent side of the model tier: one row of the report's ``models`` section per architecture.

The vendor process makes, exports and lowers the model (``conformance.models.tasks``); the
program is then loaded and executed through the standard runtime API, like a sample model, and its
outputs are compared with eager PyTorch. A row is obtained whatever happens: a lowering that fails,
crashes or hangs, or a program that does not run, is the row's ``result`` with the reason.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from conformance.comparison import assert_outputs_close, closeness
from conformance.context import Context
from conformance.models.architectures import MODELS, StandardModel
from conformance.models.results import (  # noqa: F401  (the values of a row's result, used here and re-exported)
    ERROR,
    LOWERING_FAILED,
    MATCHED,
    MISMATCH,
    NOT_DELEGATED,
    NOT_RUN,
    RESULTS,
    RUN_FAILED,
)
from conformance.operators.spec import EPS, FLOAT32
from conformance.outcomes import CheckFailed, NotApplicable
from conformance.vendor.records import unpack
from conformance.vendor.task_registry import LOWER_MODEL

TASK = LOWER_MODEL

#: A model whose float32 results the descriptor declares computed in a lower precision P (``computes_in``)
#: may differ by this many of P's epsilon, relative and at the output's scale, instead of the model's
#: float32 bound: a deep network's activations are rounded to P at every layer, so one rounding (what an
#: operator case allows) is not enough, and a few are far below a wrong result.
DECLARED_PRECISION_EPS = 4


def declared_precision(operators: Any) -> str | None:
    """The least precise float precision the descriptor's operators declare float32 results computed in
    (``OperatorDeclaration.computes_in``), or None."""
    found = {d.precision(FLOAT32) for d in operators.values()} - {None}
    return max(found, key=EPS.__getitem__) if found else None


def tolerance(model: StandardModel, operators: Any) -> tuple[float, float, str | None]:
    """(rtol, atol, the declared precision or None) the model's outputs are judged with."""
    precision = declared_precision(operators)
    if precision is None:
        return model.rtol, model.atol, None
    bound = DECLARED_PRECISION_EPS * EPS[precision]
    return max(model.rtol, bound), max(model.atol, bound), precision


def parse_models(text: str | None, flag: str = "--models") -> tuple[str, ...] | None:
    """The models of ``--models`` / ``--et-models`` ('all' or comma-separated names), None when not given;
    ValueError naming an unknown one (``flag``: how the caller spells the option)."""
    if text is None:
        return None
    wanted = [s.strip() for s in text.split(",") if s.strip()]
    if wanted == ["all"]:
        return tuple(MODELS)
    unknown = [w for w in wanted if w not in MODELS]
    if unknown or not wanted:
        raise ValueError(
            f"{flag} {text!r} selects {'unknown ' + ', '.join(unknown) if unknown else 'nothing'}; "
            f"give 'all' or model names ({', '.join(MODELS)})"
        )
    return tuple(m for m in MODELS if m in wanted)


def new_row(model: StandardModel) -> dict[str, Any]:
    return {
        "model": model.name,
        "family": model.family,
        "architecture": model.what,
        "inputs": [list(shape) for shape in model.inputs],
        "result": NOT_RUN,
        "reason": "",
        "nodes": None,
        "delegated_nodes": None,
        "delegated_fraction": None,
        "delegates": None,
        "other_backends": {},
        "cpu_ops": {},
        "rtol": model.rtol,
        "atol": model.atol,
        "max_abs_error": None,
        "tolerance_used": None,
        "duration_s": None,
    }


def measure(
    actual: list[Any], expected: list[Any], rtol: float, atol: float
) -> tuple[float, float, str | None]:
    """(largest absolute difference, its largest fraction of the tolerance, the first problem or None), by
    ``conformance.comparison``. An output may differ by ``atol * max(1, max|expected|) + rtol * |expected|``: atol
    is relative to the output's scale, since a model's outputs (logits) are not of unit size."""
    import torch

    if len(actual) != len(expected):
        return float("inf"), float("inf"), f"{len(actual)} outputs, eager PyTorch gives {len(expected)}"
    worst, used, problem = 0.0, 0.0, None
    for k, (a, e) in enumerate(zip(actual, expected)):
        if not isinstance(a, torch.Tensor) or a.shape != e.shape or a.dtype != e.dtype:
            got = f"{a.dtype}{list(a.shape)}" if isinstance(a, torch.Tensor) else type(a).__name__
            return (
                float("inf"),
                float("inf"),
                f"output {k} is {got}, eager PyTorch gives {e.dtype}{list(e.shape)}",
            )
        scaled = atol * (max(1.0, float(e.double().abs().max())) if e.numel() else 1.0)
        w, u = closeness([a], [e], rtol, scaled)
        worst, used = max(worst, w), max(used, u)
        if problem is None:
            try:
                assert_outputs_close("", [a], [e], rtol, scaled, start=k)
            except CheckFailed as exc:
                problem = str(exc).strip()
    return worst, used, problem


#: The reason of a model row whose program has no delegated operator node.
NOTHING_DELEGATED = (
    "no operator node was delegated to the backend: the program would run on ExecuTorch's CPU kernels only"
)


def timed(row: dict[str, Any], fill: Callable[[], None]) -> dict[str, Any]:
    """``row`` once ``fill()`` has filled it in, with the seconds that took as ``duration_s`` (also when
    ``fill`` raises): the one way a model tier row is timed."""
    started = time.monotonic()
    try:
        fill()
    finally:
        row["duration_s"] = round(time.monotonic() - started, 3)
    return row


def model_result(ctx: Context, name: str) -> dict[str, Any]:
    """The row of model ``name``; never raises for what the backend did."""
    model = MODELS[name]
    row = new_row(model)
    return timed(row, lambda: _fill(ctx, model, row))


def _fill(ctx: Context, model: StandardModel, row: dict[str, Any]) -> None:
    name = model.name
    try:
        lowered = ctx.call(TASK, name, what=f"export and lowering of model {name!r}")
    except CheckFailed as exc:
        row["result"], row["reason"] = LOWERING_FAILED, str(exc)
        return
    for key in ("nodes", "delegated_nodes", "delegates", "other_backends", "cpu_ops"):
        row[key] = lowered[key]
    row["delegated_fraction"] = (
        round(lowered["delegated_nodes"] / lowered["nodes"], 4) if lowered["nodes"] else 0.0
    )
    if not lowered["delegated_nodes"]:
        row["result"], row["reason"] = NOT_DELEGATED, NOTHING_DELEGATED
        return
    try:
        actual = ctx.execute(lowered["pte"], unpack(lowered["inputs"]), f"model {name!r}")
    except NotApplicable as exc:
        row["reason"] = f"not run: {exc}"
        return
    except CheckFailed as exc:
        row["result"], row["reason"] = RUN_FAILED, str(exc)
        return
    rtol, atol, precision = tolerance(model, ctx.descriptor.operators)
    if "quantizer" in lowered:  # judged against the converted model: its steps, as the quantized decoder
        row["quantizer"], row["output_scale"] = lowered["quantizer"], lowered["output_scale"]
        support = ctx.descriptor.quantized
        assert support is not None  # the vendor process quantizes only for a declared quantized.every_sample
        steps = support.max_steps
        atol = max(atol, steps * (lowered["output_scale"] or 0.0))
    row["rtol"], row["atol"] = rtol, atol
    worst, used, problem = measure(actual, unpack(lowered["expected"]), rtol, atol)
    if precision is not None:
        judged = f"judged in {precision}, which the descriptor declares float32 is computed in (computes_in)"
        problem = f"{problem}; {judged}" if problem else None
        row["reason"] = judged
    # JSON has no infinity: a NaN or infinite difference is in the reason, not in the numbers.
    row["max_abs_error"] = worst if math.isfinite(worst) else None
    row["tolerance_used"] = round(used, 4) if math.isfinite(used) else None
    row["result"], row["reason"] = (MISMATCH, problem) if problem else (MATCHED, row["reason"])
