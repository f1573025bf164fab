"""Vendor-process tasks of the LLM tier (``task_registry.LOWER_LLM`` and ``RUN_LLM``).

``lower_llm`` makes the decoder of ``conformance.models.decoder``, runs greedy decoding in eager PyTorch
(the tokens and logits to compare with), exports ``forward`` twice, as ``prefill`` (the prompt) and
``decode`` (one token), and lowers both in one call, ``to_edge_transform_and_lower({"prefill": ...,
"decode": ...}, partitioner=make_partitioners())``, as ExecuTorch's LLM flow does. It is pure export and
lowering, so its result is cached (``lowering_cache``).

The two methods share the KV cache. ExecuTorch 1.5.1 plans each method's mutable buffers in that method's
own memory unless the program is made with ``MemoryPlanningPass(share_mutable_buffers=True)``: then every
mutable buffer of one name is placed once, in a memory arena of its own (id 2) that every method of a
loaded program reads, and the runtime gives all host-only methods of one program the same arenas. The
suite uses it, so decoding is prefill once then decode calls, each reading what the earlier calls wrote,
as ExecuTorch's LLM runners do with such a program. The cache's initial value (zeros) is stored in the
program (``InitializedMutableBufferPass``), so a new load starts from it, not from whatever memory held.

With ``quantized`` (the ``llm_quantized`` row, and the ``llm`` row of a backend that takes only quantized
programs: ``llm_runner`` decides) the decoder is first quantized with the descriptor's quantizer
(``QuantizedSupport.make_quantizer``), as the PT2E flow does for an LLM: one export whose sequence length
is dynamic (so that the one graph serves both methods), ``prepare_pt2e``, calibration by greedy decoding of
the prompt, ``convert_pt2e``; the cache is zeroed, the converted model decodes in eager PyTorch (the tokens
and logits to compare with: the quantized model, not the float one), is zeroed again, and is exported as the
two methods and lowered as above.

``run_llm`` loads the program once, both methods from it, and runs greedy decoding with the runtime's
logits choosing each next token; it returns the tokens, the logits of each step and the seconds of each
call (a load or execute that fails is the answer's ``error`` and ``step``).
"""

from __future__ import annotations

from typing import Any

from conformance.models.tasks import placement
from conformance.vendor.bootstrap import descriptor
from conformance.vendor.core_tasks import partitioners, require_runtime
from conformance.vendor.envelope import VendorError, step, vendor_call
from conformance.vendor.records import pack, unpack
from conformance.vendor.sample_quantization import load_quantized_kernels, made_quantizer, output_scales

METHODS = ("prefill", "decode")


def _caches(module: Any) -> dict[str, Any]:
    """The decoder's KV cache buffers by name."""
    return {name: b for name, b in module.named_buffers() if name.endswith(("k_cache", "v_cache"))}


def _zero_caches(module: Any) -> None:
    for buffer in _caches(module).values():
        buffer.zero_()


def _export(module: Any, method: str, dynamic: bool = False) -> Any:
    """``torch.export.export`` of ``module`` with ``method``'s example inputs; ``dynamic``: the sequence length
    of the tokens dynamic (1 to ``MAX_SEQ``), one graph for both methods. A failure is the suite's."""
    import torch

    from conformance.models import decoder

    step(
        f"torch.export.export of the decoder's {'graph for both methods' if dynamic else method + ' method'}"
    )
    shapes = ({1: torch.export.Dim.AUTO(min=1, max=decoder.MAX_SEQ)}, None) if dynamic else None
    try:
        return torch.export.export(module, decoder.example_inputs(method), dynamic_shapes=shapes)
    except Exception as exc:  # noqa: BLE001  (not the vendor's code: the suite's model cannot be exported)
        raise VendorError(
            f"the suite could not export the decoder's {method}: {type(exc).__name__}: {exc}"[:2000]
        ) from None


def _quantize(module: Any) -> tuple[Any, dict[str, Any]]:
    """The decoder quantized with the descriptor's quantizer (module docstring), its cache zeroed, and what the
    row records: the quantizer's class and the scale of the logits' dequantize (None if they are not)."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from conformance.models import decoder

    quantizer, kind, is_quantizer = made_quantizer()
    if not is_quantizer:
        raise VendorError(f"quantized.make_quantizer() returned {kind}, not a torchao PT2E Quantizer")
    graph = _export(module, "prefill", dynamic=True).module()
    prepared = vendor_call(f"prepare_pt2e of the decoder with {kind}", prepare_pt2e, graph, quantizer)
    step("calibration: greedy decoding of the prompt with the prepared decoder")
    vendor_call("calibration of the decoder", decoder.greedy, prepared, prepared, decoder.prompt())
    converted = vendor_call("convert_pt2e of the decoder", convert_pt2e, prepared)
    load_quantized_kernels()
    _zero_caches(converted)
    return converted, {"quantizer": kind, "logits_scale": output_scales(converted)[0]}


def lower_llm(shared_state: bool = True, quantized: bool = False) -> dict[str, Any]:
    """Makes, runs, exports and lowers the decoder (module docstring): the program, the prompt, eager
    PyTorch's tokens and logits, and where the operators of each method ran. ``shared_state`` False: the
    methods keep a cache each, so decode never sees what prefill wrote (what a runtime that does not share
    state between the methods of a program gives: the tests' broken case). ``quantized``: the decoder
    quantized with the descriptor's quantizer; the answer adds ``quantizer`` and ``logits_scale``."""
    import torch
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes import MemoryPlanningPass
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass

    from conformance.models import decoder

    facts: dict[str, Any] = {}
    with torch.no_grad():
        module = decoder.make()
        if quantized:
            module, facts = _quantize(module)
        step("greedy decoding of the decoder in eager PyTorch")
        eager = decoder.greedy(module, module, decoder.prompt())
        _zero_caches(module)
    # The float decoder is made again for each export; the quantized one is exported from its zeroed state.
    exported = {method: _export(module if quantized else decoder.make(), method) for method in METHODS}
    edge = vendor_call(
        "lowering the decoder's prefill and decode methods with the backend's partitioners",
        to_edge_transform_and_lower,
        exported,
        partitioner=partitioners("default"),
    )
    backend = descriptor().backend_id
    placed = {method: placement(edge.exported_program(method), backend) for method in METHODS}
    config = ExecutorchBackendConfig(
        memory_planning_pass=MemoryPlanningPass(share_mutable_buffers=shared_state),
        passes=[InitializedMutableBufferPass(list(_caches(module)))],
    )
    program = vendor_call("to_executorch() of the decoder", edge.to_executorch, config)
    return {
        "pte": bytes(program.buffer),
        "prompt": pack([decoder.prompt()]),
        "tokens": eager.tokens,
        "logits": pack(eager.logits),
        "methods": placed,
        **facts,
    }


def run_llm(pte: bytes, prompt: bytes, what: str, forced: list[int] | None = None) -> dict[str, Any]:
    """Loads ``pte`` once, its prefill and decode methods, and decodes greedily from ``prompt`` (``forced``:
    teacher-forced with those tokens, ``decoder.greedy``): {'tokens', 'logits' (packed), 'seconds'} or
    {'error', 'step'}. On a target the runner serves it (``conformance.targets.runtime``), teacher-forced."""
    from executorch.runtime import Runtime

    from conformance.models import decoder

    require_runtime()
    current = f"load of {what}"
    step(current)
    try:
        program = Runtime.get().load_program(pte)
        loaded = {method: program.load_method(method) for method in METHODS}
    except RuntimeError as exc:
        return {"error": str(exc), "step": current}

    def on_step(k: int) -> None:
        nonlocal current
        current = f"execute of {what}: step {k + 1}, " + (
            "prefill of the prompt" if k == 0 else f"decode at position {decoder.PROMPT + k - 1}"
        )
        step(current)

    def call(method: str) -> Any:
        return lambda tokens, pos: loaded[method].execute([tokens, pos])

    try:
        run = decoder.greedy(
            call("prefill"), call("decode"), unpack(prompt)[0], on_step=on_step, forced=forced
        )
    except RuntimeError as exc:
        return {"error": str(exc), "step": current}
    finally:
        step(f"destroy of {what} (the loaded methods freed)")
        loaded.clear()
        del program
    return {"tokens": run.tokens, "logits": pack(run.logits), "seconds": run.seconds}
