"""The reference backend's PT2E quantizer: int8 linear, conv2d, add and relu,
for the standard flow

    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, convert_pt2e
    model = torch.export.export(module, example_inputs).module()
    prepared = prepare_pt2e(model, ReferenceQuantizer())
    prepared(*calibration_inputs)               # calibrate
    converted = convert_pt2e(prepared)
    program = to_edge_transform_and_lower(torch.export.export(converted, example_inputs),
                                          partitioner=[ReferencePartitioner()])

Weights are quantized per output channel, symmetric (int8 in [-127, 127],
zero point 0); activations per tensor, affine (int8 in [-128, 127]). Biases
stay float here and are quantized to int32 when the backend lowers the
subgraph (reference_backend.passes). A relu right after a linear or conv2d is
fused: only its output is observed.

Built on the public PT2E API of torchao (``torchao.quantization.pt2e``:
``Quantizer``, ``QuantizationAnnotation``, ``QuantizationSpec``,
``SharedQuantizationSpec``, observers), the base class ExecuTorch's own
XNNPACKQuantizer uses with torch 2.13 and executorch 1.5.
"""

from __future__ import annotations

import torch
from torchao.quantization.pt2e import (
    HistogramObserver,
    MinMaxObserver,
    PerChannelMinMaxObserver,
)
from torchao.quantization.pt2e.quantizer import (
    QuantizationAnnotation,
    QuantizationSpec,
    Quantizer,
    SharedQuantizationSpec,
)

ANNOTATION_KEY = "quantization_annotation"

_LINEAR = (torch.ops.aten.linear.default,)
_CONV = (torch.ops.aten.conv2d.default,)
_RELU = (torch.ops.aten.relu.default, torch.ops.aten.relu_.default)
_ADD = (torch.ops.aten.add.Tensor, torch.ops.aten.add_.Tensor)


def activation_spec(observer=HistogramObserver) -> QuantizationSpec:
    """Per-tensor affine int8 in [-128, 127]."""
    return QuantizationSpec(
        dtype=torch.int8,
        quant_min=-128,
        quant_max=127,
        qscheme=torch.per_tensor_affine,
        is_dynamic=False,
        observer_or_fake_quant_ctr=observer.with_args(eps=2**-12),
    )


def weight_spec() -> QuantizationSpec:
    """Per-output-channel symmetric int8 in [-127, 127] (zero point 0)."""
    return QuantizationSpec(
        dtype=torch.int8,
        quant_min=-127,
        quant_max=127,
        qscheme=torch.per_channel_symmetric,
        ch_axis=0,
        is_dynamic=False,
        observer_or_fake_quant_ctr=PerChannelMinMaxObserver.with_args(eps=2**-12),
    )


def _float(node: object) -> bool:
    """A node computing a floating-point tensor (integer arithmetic, such as
    positions, is never quantized)."""
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return isinstance(val, torch.Tensor) and val.dtype.is_floating_point


def _annotated(node: torch.fx.Node) -> bool:
    annotation = node.meta.get(ANNOTATION_KEY)
    return annotation is not None and annotation._annotated


def _mark(node: torch.fx.Node, inputs: dict, output) -> None:
    node.meta[ANNOTATION_KEY] = QuantizationAnnotation(
        input_qspec_map=inputs, output_qspec=output, _annotated=True
    )


def _output_observed(node: torch.fx.Node) -> bool:
    annotation = node.meta.get(ANNOTATION_KEY)
    return annotation is not None and annotation.output_qspec is not None


class ReferenceQuantizer(Quantizer):
    """Annotates linear, conv2d, add and relu for the reference runtime's int8 kernels.

    ``observer``: the activation observer class (HistogramObserver by
    default; MinMaxObserver calibrates faster)."""

    def __init__(self, observer=HistogramObserver) -> None:
        super().__init__()
        self.observer = observer

    def annotate(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
        act = activation_spec(self.observer)
        for node in model.graph.nodes:
            if node.op != "call_function" or _annotated(node):
                continue
            if node.target in _LINEAR + _CONV:
                self._annotate_weighted(node, act)
        for node in model.graph.nodes:
            if node.op != "call_function" or _annotated(node):
                continue
            if not _float(node):
                continue
            if (
                node.target in _ADD
                and len(node.args) >= 2
                and all(_float(a) for a in node.args[:2])
                and node.kwargs.get("alpha", 1) == 1
            ):
                _mark(node, {a: self._input_spec(a, act) for a in node.args[:2]}, act)
            elif node.target in _RELU and _float(node.args[0]):
                source = node.args[0]
                _mark(node, {source: self._input_spec(source, act)}, SharedQuantizationSpec((source, node)))
        return model

    def _input_spec(self, source: torch.fx.Node, act: QuantizationSpec):
        """An input already observed as another op's output keeps that observer."""
        return SharedQuantizationSpec(source) if _output_observed(source) else act

    def _annotate_weighted(self, node: torch.fx.Node, act: QuantizationSpec) -> None:
        x, weight = node.args[0], node.args[1]
        bias = node.args[2] if len(node.args) > 2 else None
        if not (isinstance(x, torch.fx.Node) and isinstance(weight, torch.fx.Node)):
            return
        inputs = {x: self._input_spec(x, act), weight: weight_spec()}
        users = list(node.users)
        if len(users) == 1 and users[0].target in _RELU:
            # linear/conv2d + relu: one quantized op with a clamped output.
            _mark(node, inputs, None)
            _mark(users[0], {}, act)
        else:
            _mark(node, inputs, act)
        del bias  # float; quantized to int32 by the backend when lowering

    def validate(self, model: torch.fx.GraphModule) -> None:
        pass


__all__ = ["MinMaxObserver", "ReferenceQuantizer", "activation_spec", "weight_spec"]
