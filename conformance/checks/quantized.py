"""Quantized-flow checks (C-QNT-1..3): the backend's PT2E quantizer, the
quantize/dequantize nodes its delegate consumes, and the integer results
against the converted (fake-quantized) model. They apply to backends whose
descriptor declares ``quantized`` (``conformance.descriptor.QuantizedSupport``).
"""

from __future__ import annotations

from conformance.comparison import assert_outputs_close, closeness
from conformance.context import Context
from conformance.outcomes import CheckFailed, ensure
from conformance.registry import check
from conformance.vendor.records import unpack
from conformance.vendor.task_registry import QUANTIZED_FLOW

CAPABILITY = "quantized"
#: what the shared task does, for messages ({sample}: the sample's name)
WHAT = "quantizing and lowering sample model {sample}"


@check(
    "QNT-1",
    "C-QNT-1",
    "the quantizer is a PT2E Quantizer that prepare_pt2e and convert_pt2e accept",
    applies_if="quantized",
)
def quantizer_is_public(ctx: Context) -> str:
    flow = ctx.capability_flow(CAPABILITY, QUANTIZED_FLOW, WHAT)
    ensure(
        flow["is_quantizer"],
        f"quantized.make_quantizer() returned {flow['quantizer']}, which is not a "
        "torchao.quantization.pt2e.quantizer.Quantizer",
    )
    return f"{flow['quantizer']} quantized, calibrated and converted sample {ctx.capability(CAPABILITY).sample!r}"


@check(
    "QNT-2",
    "C-QNT-2",
    "no quantize/dequantize node is left on CPU around a delegated operator",
    applies_if="quantized",
)
def delegate_consumes_qdq(ctx: Context) -> str:
    flow = ctx.capability_flow(CAPABILITY, QUANTIZED_FLOW, WHAT)
    ensure(flow["is_quantizer"], "no quantized model to lower: see QNT-1")
    backend_id = ctx.descriptor.backend_id
    sample = ctx.capability(CAPABILITY).sample
    ensure(
        flow["delegates"] > 0,
        f"the quantized sample {sample!r} lowered with the backend's partitioners has no "
        f"{backend_id} delegate",
    )
    if flow["leftovers"]:
        raise CheckFailed(
            f"quantized sample {sample!r}: {len(flow['leftovers'])} quantize/dequantize node(s) left on CPU next "
            f"to the {backend_id} delegate: {'; '.join(flow['leftovers'][:4])}; the partitioner must claim them "
            "(the delegate consumes int8 data, not floats the CPU dequantized)"
        )
    return f"{flow['delegates']} {backend_id} delegate(s); no quantize/dequantize node on CPU next to them"


@check(
    "QNT-3",
    "C-QNT-3",
    "quantized outputs match the converted model within the declared quantization steps",
    applies_if="quantized",
)
def quantized_numerics(ctx: Context) -> str:
    flow = ctx.capability_flow(CAPABILITY, QUANTIZED_FLOW, WHAT)
    ensure(flow["is_quantizer"], "no quantized model to run: see QNT-1")
    support = ctx.capability(CAPABILITY)
    model = ctx.descriptor.sample(support.sample)
    ensure(flow["pte"] is not None, f"quantized sample {support.sample!r}: {flow.get('pte_error')}")
    inputs, expected = unpack(flow["inputs"]), unpack(flow["expected"])
    actual = ctx.execute(flow["pte"], inputs, f"quantized sample {support.sample!r}")
    ensure(
        len(actual) == len(expected),
        f"quantized sample {support.sample!r}: {len(actual)} outputs, the "
        f"converted model gives {len(expected)}",
    )
    label = f"quantized sample {support.sample!r}"
    notes = []
    for i, (a, e, scale) in enumerate(zip(actual, expected, flow["scales"])):
        if scale is None:
            assert_outputs_close(
                label, [a], [e], model.rtol, model.atol, reference="the converted model", start=i
            )
            notes.append(f"output {i}: float (rtol={model.rtol}, atol={model.atol})")
            continue
        try:
            assert_outputs_close(
                label,
                [a],
                [e],
                0.0,
                support.max_steps * scale * (1 + 1e-6),
                reference="the converted model",
                start=i,
            )
        except CheckFailed as exc:
            worst = closeness([a], [e], 0.0, 1.0)[0] / scale  # the largest difference, in steps
            raise CheckFailed(
                f"{exc}; that is {worst:.2f} quantization steps of its scale {scale:.3g}, the backend "
                f"declares at most {support.max_steps}"
            ) from None
        notes.append(f"output {i}: within {support.max_steps} step(s) of {scale:.3g}")
    return "; ".join(notes)
