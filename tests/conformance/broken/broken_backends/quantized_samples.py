"""The reference backend as an integer-only backend (``quantized.every_sample``), for
``--backend broken_backends.quantized_samples:NAME``: every sample quantized with ReferenceQuantizer before it is
lowered, and relu, add, linear and convolution declared in quantized patterns only.

EVERY_SAMPLE:    sound.
NOT_A_QUANTIZER: every_sample with a make_quantizer() that returns no PT2E Quantizer.
"""

from __future__ import annotations

import dataclasses
from functools import partial

from conformance.descriptor import SampleModel
from conformance.operators import OperatorSupport
from reference_backend.conformance import DESCRIPTOR as REFERENCE
from reference_backend.quantizer import MinMaxObserver, ReferenceQuantizer

#: A quantized output is within a step or two of the converted model's; the samples' outputs are at most a few
#: units, so a step is below 0.05.
_ATOL = 0.1


def _sample(name: str) -> SampleModel:
    return dataclasses.replace(REFERENCE.sample(name), atol=_ATOL)


EVERY_SAMPLE = dataclasses.replace(
    REFERENCE,
    sample_models=(_sample("mlp"), _sample("quant_net")),
    quantized=dataclasses.replace(
        REFERENCE.quantized, make_quantizer=partial(ReferenceQuantizer, MinMaxObserver), every_sample=True
    ),
    supported_ops=frozenset(),  # the reference's float declarations are not this backend's
    operators=OperatorSupport.float32(
        "quantized_decomposed::quantize_per_tensor",
        "quantized_decomposed::dequantize_per_tensor",
        "quantized_decomposed::dequantize_per_channel",
    )
    | OperatorSupport.in_quantized_patterns(
        "aten::relu",
        "aten::add.Tensor",
        "aten::linear",
        "aten::convolution",
        without=("channels_last",),
        reason="the runtime reads every tensor in the default dim order",
    ),
    named_data=None,
    dynamic_shapes=None,
    composition=None,
)

NOT_A_QUANTIZER = dataclasses.replace(
    EVERY_SAMPLE, quantized=dataclasses.replace(EVERY_SAMPLE.quantized, make_quantizer=lambda: object())
)
