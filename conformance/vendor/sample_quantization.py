"""PT2E quantization of a sample model in the vendor process: export, ``prepare_pt2e`` with the descriptor's
quantizer, calibration on the sample's inputs (and three batches of its ``make_inputs``, if declared),
``convert_pt2e``.

The one place the suite quantizes a sample: the quantized checks (C-QNT-*) quantize their float sample with it,
and a backend that declares ``quantized.every_sample`` (it takes only integer graphs: Arm's TOSA INT and Ethos-U
flows) has every sample quantized with it before the other checks lower it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backend_kit.aot import schema_name
from conformance.vendor.bootstrap import descriptor
from conformance.vendor.envelope import VendorError, vendor_call

QUANTIZE_OPS = ("quantized_decomposed::quantize_per_tensor", "quantized_decomposed::quantize_per_channel")
#: per tensor first: the dequantize whose scale ``output_scales`` reads
DEQUANTIZE_OPS = (
    "quantized_decomposed::dequantize_per_tensor",
    "quantized_decomposed::dequantize_per_channel",
)


def load_quantized_kernels() -> None:
    """Registers ExecuTorch's out variants of quantize/dequantize in this process (importing
    ``executorch.kernels.quantized``; once per process). A quantized program whose partitioners leave
    quantize/dequantize nodes on CPU needs them to be written (``to_executorch``) and to run, as in a user's
    program (C-QNT-2): the quantize step calls this, and so does a process that runs such programs from the
    lowering cache without quantizing anything itself."""
    import executorch.kernels.quantized  # noqa: F401


def made_quantizer() -> tuple[Any, str, bool]:
    """A fresh quantizer from the descriptor, its type's qualified name, and whether it is a torchao PT2E
    ``Quantizer``."""
    from torchao.quantization.pt2e.quantizer import Quantizer

    quantizer = vendor_call("quantized.make_quantizer()", descriptor().quantized.make_quantizer)
    kind = f"{type(quantizer).__module__}.{type(quantizer).__qualname__}"
    return quantizer, kind, isinstance(quantizer, Quantizer)


@dataclass(frozen=True)
class AsTheBackendTakesIt:
    """A module quantized for a backend whose ``quantized.every_sample`` is set: the converted graph module,
    the quantizer's qualified type name, and the scale of each output's dequantize (None where it has none)."""

    module: Any
    quantizer: str
    output_scales: list[float | None]


def as_the_backend_takes_it(what: str, module: Any, batches: list[tuple[Any, ...]]) -> AsTheBackendTakesIt:
    """``module`` (``what`` names it in messages) quantized with a fresh quantizer from the descriptor and
    calibrated on ``batches``: what a backend that takes only quantized graphs is given, for a sample, a model
    of the model tier and a batch of corpus cases alike. VendorError naming the type when the quantizer is not
    a PT2E Quantizer."""
    quantizer, kind, is_quantizer = made_quantizer()
    if not is_quantizer:
        raise VendorError(
            f"quantized.every_sample is set, but quantized.make_quantizer() returned {kind}, which is not a "
            "torchao PT2E Quantizer (torchao.quantization.pt2e.quantizer.Quantizer)"
        )
    converted = quantize(what, module, batches, quantizer, kind)
    return AsTheBackendTakesIt(converted, kind, output_scales(converted))


def calibration_batches(name: str, inputs: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The sample's inputs, then three batches of its ``make_inputs`` (seeded 1), if it declares one."""
    import torch

    batches = [inputs]
    model = descriptor().sample(name)
    if model.make_inputs is not None:
        generator = torch.Generator().manual_seed(1)
        batches += [tuple(vendor_call("make_inputs()", model.make_inputs, generator)) for _ in range(3)]
    return batches


def quantize(what: str, module: Any, batches: list[tuple[Any, ...]], quantizer: Any, kind: str) -> Any:
    """The converted (fake-quantized) graph module of ``module`` (``what`` names it in messages): exported with
    ``batches[0]``, prepared, calibrated on every batch, converted; its train()/eval() allowed."""
    import torch
    from torchao.quantization.pt2e import allow_exported_model_train_eval
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    exported = vendor_call(f"torch.export.export of {what}", torch.export.export, module, batches[0])
    # Without the input guards torch 2.13 puts in a call_module node by default: calibration calls the graph with
    # the export's own shapes, and Arm's quantizer runs graph passes that refuse any call_module node.
    graph = exported.module(check_guards=False)
    prepared = vendor_call(f"prepare_pt2e of {what} with {kind}", prepare_pt2e, graph, quantizer)
    with torch.no_grad():
        for batch in batches:
            vendor_call(f"calibration of {what}", prepared, *batch)
        converted = vendor_call(f"convert_pt2e of {what}", convert_pt2e, prepared)
    load_quantized_kernels()
    # The checks put a sample inside modules of their own (a stateful wrapper, a second method) and call
    # eval() on those; a converted graph module refuses train()/eval() unless allowed.
    return allow_exported_model_train_eval(converted)


def call_keeping_node_meta(module: Any, *args: Any) -> Any:
    """``module(*args)``, for a module of the suite that calls a sample: a graph module (a sample quantized with
    the descriptor's quantizer) is run node by node with its nodes' metadata preserved, as torch.export runs a
    graph module it is handed itself, so that exporting the caller keeps what the quantizer wrote there. Arm's
    partitioners claim only nodes their quantizer marked in ``node.meta["custom"]``, which a plain call drops
    (scoreboard/reproducers/arm_tosa_int_wrapped_model_not_delegated.py)."""
    import torch

    if not isinstance(module, torch.fx.GraphModule):
        return module(*args)
    with torch.fx.traceback.preserve_node_meta():
        return torch.fx.Interpreter(module).run(*args)


def output_scales(graph_module: Any) -> list[float | None]:
    """Of each output of a converted graph: the scale of the per-tensor dequantize it comes from, or None."""
    outputs = graph_module.graph.output_node().args[0]
    scales: list[float | None] = []
    for out in outputs if isinstance(outputs, (list, tuple)) else [outputs]:
        is_call = getattr(out, "op", None) == "call_function"
        is_dequantize = is_call and schema_name(out.target) == DEQUANTIZE_OPS[0]
        scales.append(float(out.args[1]) if is_dequantize else None)
    return scales
