"""The model tier (``--et-models`` / ``run --models``): one test per standard architecture of
``conformance.models``. Report-only: the test records the model's row for the report's ``models``
section and passes whenever the row was obtained; the row's ``result`` says whether the model was
delegated and matched eager PyTorch. It counts for no check and never changes the verdict."""

from __future__ import annotations

import json
import traceback

import pytest

from conformance.models.architectures import MODELS


@pytest.mark.parametrize("model", list(MODELS))
def test_model(model, et_context, record_property):
    from conformance.models.llm_runner import NAME as LLM
    from conformance.models.llm_runner import QUANTIZED, llm_result
    from conformance.models.runner import model_result

    et_context.start_check(f"model {model}")
    try:
        if model in (LLM, QUANTIZED):
            row = llm_result(et_context, quantized=model == QUANTIZED)
        else:
            row = model_result(et_context, model)
    except Exception as exc:  # noqa: BLE001  a defect of the suite itself: the row says so
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        pytest.fail(
            f"the model tier itself failed: {type(exc).__name__}: {exc} (at {frame.filename}:{frame.lineno})",
            pytrace=False,
        )
    finally:
        et_context.current_check = None
    record_property("model", json.dumps(row, sort_keys=True))
