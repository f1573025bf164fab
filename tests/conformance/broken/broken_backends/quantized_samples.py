"""The reference backend as an integer-only backend (``quantized.every_sample``), for
``--backend broken_backends.quantized_samples:NAME``: every sample quantized with ReferenceQuantizer before it is
lowered, and relu, add, linear and convolution declared in quantized patterns only.

EVERY_SAMPLE:    sound.
NOT_A_QUANTIZER: every_sample with a make_quantizer() that returns no PT2E Quantizer.
MARKED_ONLY:     sound, and its partitioner claims a quantized graph only where its quantizer marked the nodes it
                 annotated in ``node.meta["custom"]``, as Arm's TOSA and Ethos-U partitioners do: a program that
                 calls the converted sample from a module of its own is delegated only if that metadata is kept.
                 The program's input quantize and output dequantize stay on CPU, as on Arm's TOSA INT flow.
"""

from __future__ import annotations

import dataclasses
from functools import partial

from conformance.descriptor import SampleModel
from conformance.operators import OperatorSupport
from reference_backend.conformance import DESCRIPTOR as REFERENCE
from reference_backend.partitioner import ReferenceOperatorSupport, ReferencePartitioner
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


#: The key MarkingQuantizer writes in ``node.meta["custom"]`` of each node it annotates.
MARK = "quantized_by_the_marking_quantizer"


class MarkingQuantizer(ReferenceQuantizer):
    """ReferenceQuantizer that also marks each node it annotates in ``node.meta["custom"]``."""

    def annotate(self, model):
        model = super().annotate(model)
        for node in model.graph.nodes:
            if "quantization_annotation" in node.meta:
                node.meta.setdefault("custom", {})[MARK] = True
        return model


def _marked(node) -> bool:
    return bool(node.meta.get("custom", {}).get(MARK))


class _MarkedSupport(ReferenceOperatorSupport):
    """The reference's support, for marked nodes only, and the quantize/dequantize nodes between them: a
    quantize of a marked node's output, a dequantize a marked node reads. As on Arm's TOSA INT flow, the
    quantize of the program's input and the dequantize of its output stay on CPU."""

    def is_node_supported(self, submodules, node) -> bool:
        if not super().is_node_supported(submodules, node):
            return False
        if _marked(node):
            return True
        target = str(node.target)
        if "quantize_per_tensor" in target and "dequantize" not in target:
            return any(_marked(n) for n in node.all_input_nodes)
        if "dequantize_per" in target:
            return any(_marked(n) for n in node.users)
        return False


class MarkedOnlyPartitioner(ReferencePartitioner):
    def operator_support(self):
        return _MarkedSupport(self.blob_format[1])

    def ops_to_not_decompose(self, ep):
        ops, _keep = super().ops_to_not_decompose(ep)
        support = self.operator_support()
        return ops, lambda node: support.is_node_supported(None, node)


MARKED_ONLY = dataclasses.replace(
    EVERY_SAMPLE,
    make_partitioners=lambda: [MarkedOnlyPartitioner(REFERENCE.make_partitioners()[0].compile_specs)],
    quantized=dataclasses.replace(
        EVERY_SAMPLE.quantized, make_quantizer=partial(MarkingQuantizer, MinMaxObserver)
    ),
)
