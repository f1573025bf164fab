"""Folds the quantize/dequantize nodes that PT2E's convert_pt2e leaves around
each quantized operator into the reference backend's integer operators
(``reference_backend.quantized_ops``):

    dequantize(x_q) -> linear(., dequantize_per_channel(w_q), bias) [-> relu] -> quantize
        becomes  qlinear(x_q, w_q, bias_int32, multipliers, shifts, ...)   (conv2d likewise)
    dequantize(a_q), dequantize(b_q) -> add -> quantize      becomes  qadd(a_q, b_q, ...)
    dequantize(x_q) -> relu -> quantize                      becomes  qrelu(x_q, ...)

and turns every other quantize_per_tensor / dequantize_per_tensor into the
backend's own quantize / dequantize (the int8 <-> float32 boundary of the
delegate). The fixed-point multipliers and the int32 bias are computed here,
with ``reference_backend.qmath``, the arithmetic the runtime executes.
"""

from __future__ import annotations

import torch
from torch.export import ExportedProgram
from torch.fx.passes.infra.pass_base import PassBase, PassResult

import reference_backend.quantized_ops  # noqa: F401  (registers torch.ops.reference_backend)
from backend_kit.aot import schema_name
from reference_backend import qmath

QUANTIZE = "quantized_decomposed::quantize_per_tensor"
DEQUANTIZE = "quantized_decomposed::dequantize_per_tensor"
DEQUANTIZE_PER_CHANNEL = "quantized_decomposed::dequantize_per_channel"
RB = torch.ops.reference_backend


def _is(node, name: str) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and schema_name(node.target) == name


def _per_tensor(node: torch.fx.Node) -> tuple[float, int, int, int]:
    """(scale, zero point, qmin, qmax) of a quantize/dequantize_per_tensor node."""
    _, scale, zero_point, qmin, qmax, _dtype = node.args[:6]
    return float(scale), int(zero_point), int(qmin), int(qmax)


class FoldQuantizedOps(PassBase):
    """The fold described in the module docstring, on the graph of ``program``
    (whose constants hold the int8 weights and their per-channel scales)."""

    def __init__(self, program: ExportedProgram) -> None:
        super().__init__()
        from reference_backend.serialize import constant_tensors

        self.constants = {name: tensor for name, (_, tensor) in constant_tensors(program).items()}

    def _constant(self, node) -> torch.Tensor | None:
        if isinstance(node, torch.fx.Node) and node.op == "placeholder":
            return self.constants.get(node.name)
        return None

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        graph = graph_module.graph
        changed = False
        for node in list(graph.nodes):
            if _is(node, QUANTIZE):
                folded = self._fold(graph, node)
                if folded is not None:
                    folded.meta.update(node.meta)
                    node.replace_all_uses_with(folded)
                    graph.erase_node(node)
                    changed = True
        graph.eliminate_dead_code()
        for node in list(graph.nodes):
            if _is(node, QUANTIZE) or _is(node, DEQUANTIZE):
                scale, zero_point, qmin, qmax = _per_tensor(node)
                with graph.inserting_before(node):
                    if _is(node, QUANTIZE):
                        new = graph.call_function(
                            RB.quantize.default,
                            (node.args[0], qmath.inverse_scale(scale), zero_point, qmin, qmax),
                        )
                    else:
                        new = graph.call_function(RB.dequantize.default, (node.args[0], scale, zero_point))
                new.meta.update(node.meta)
                node.replace_all_uses_with(new)
                graph.erase_node(node)
                changed = True
        graph.lint()
        graph_module.recompile()
        return PassResult(graph_module, changed)

    # ------------------------------------------------------------------ patterns

    def _fold(self, graph: torch.fx.Graph, q: torch.fx.Node) -> torch.fx.Node | None:
        out_scale, out_zero, qmin, qmax = _per_tensor(q)
        src = q.args[0]
        relu = False
        if _is(src, "aten::relu") and len(src.users) == 1:
            inner = src.args[0]
            if (_is(inner, "aten::linear") or _is(inner, "aten::convolution")) and len(inner.users) == 1:
                relu, src = True, inner
        if relu:
            qmin = max(qmin, out_zero)  # relu fused: clamp at the output's zero
        with graph.inserting_before(q):
            if _is(src, "aten::linear") or _is(src, "aten::convolution"):
                return self._fold_weighted(graph, src, out_scale, out_zero, qmin, qmax)
            if _is(src, "aten::add.Tensor") and src.kwargs.get("alpha", 1) == 1:
                a, b = src.args[:2]
                if _is(a, DEQUANTIZE) and _is(b, DEQUANTIZE):
                    (sa, za, _, _), (sb, zb, _, _) = _per_tensor(a), _per_tensor(b)
                    (ma, mb), shift = qmath.shared_shift([sa / out_scale, sb / out_scale])
                    return graph.call_function(
                        RB.qadd.default, (a.args[0], b.args[0], za, zb, out_zero, qmin, qmax, ma, mb, shift)
                    )
            if _is(src, "aten::relu") and _is(src.args[0], DEQUANTIZE):
                sx, zx, _, _ = _per_tensor(src.args[0])
                m, s = qmath.fixed_point(sx / out_scale)
                return graph.call_function(
                    RB.qrelu.default, (src.args[0].args[0], zx, out_zero, max(qmin, out_zero), qmax, m, s)
                )
        return None

    def _fold_weighted(self, graph, op, out_scale, out_zero, qmin, qmax) -> torch.fx.Node | None:
        x, w = op.args[0], op.args[1]
        bias = op.args[2] if len(op.args) > 2 else None
        if not (_is(x, DEQUANTIZE) and _is(w, DEQUANTIZE_PER_CHANNEL)):
            return None
        weight_q = self._constant(w.args[0])
        scales, zeros = self._constant(w.args[1]), self._constant(w.args[2])
        if weight_q is None or scales is None or zeros is None or int(w.args[3]) != 0 or bool(zeros.any()):
            return None
        x_scale, x_zero, _, _ = _per_tensor(x)
        bias_q = None
        if bias is not None:
            bias_t = self._constant(bias)
            if bias_t is None:
                return None
            bias_q = qmath.quantize_bias(bias_t, x_scale, scales)
        fixed = [qmath.fixed_point(x_scale * float(s) / out_scale) for s in scales.to(torch.float64)]
        multipliers, shifts = [m for m, _ in fixed], [s for _, s in fixed]
        if _is(op, "aten::linear"):
            return graph.call_function(
                RB.qlinear.default,
                (x.args[0], w.args[0], bias_q, multipliers, shifts, x_zero, out_zero, qmin, qmax),
            )
        stride, padding, dilation, transposed, _output_padding, groups = op.args[3:9]
        if transposed:
            return None
        return graph.call_function(
            RB.qconv2d.default,
            (
                x.args[0],
                w.args[0],
                bias_q,
                list(stride),
                list(padding),
                list(dilation),
                int(groups),
                multipliers,
                shifts,
                x_zero,
                out_zero,
                qmin,
                qmax,
            ),
        )


def fold_quantized(program: ExportedProgram) -> ExportedProgram:
    """Runs FoldQuantizedOps on ``program``'s graph in place; returns the program."""
    FoldQuantizedOps(program)(program.graph_module)
    return program
