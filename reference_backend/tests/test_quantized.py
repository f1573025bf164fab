"""The int8 kernels of the C++ runtime against their Python reference
(reference_backend.qmath, through the folded graph's custom ops), bit for bit,
and against the converted PT2E model."""

from __future__ import annotations

import torch
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

from reference_backend import ReferencePartitioner, qmath
from reference_backend.conformance import _quant_inputs, _QuantNet
from reference_backend.passes import fold_quantized
from reference_backend.quantizer import ReferenceQuantizer


def _quantized(seed: int = 0):
    torch.manual_seed(seed)
    model = _QuantNet().eval()
    generator = torch.Generator().manual_seed(seed)
    inputs = _quant_inputs(generator)
    prepared = prepare_pt2e(torch.export.export(model, inputs).module(), ReferenceQuantizer())
    for _ in range(4):
        prepared(*_quant_inputs(generator))
    converted = convert_pt2e(prepared)
    return converted, inputs


def test_runtime_is_bit_exact_with_the_python_reference(runtime):
    converted, inputs = _quantized()
    edge = to_edge_transform_and_lower(
        torch.export.export(converted, inputs), partitioner=[ReferencePartitioner()]
    )
    lowered = [
        m for _, m in edge.exported_program().graph_module.named_children() if hasattr(m, "backend_id")
    ]
    assert len(lowered) == 1 and lowered[0].backend_id == "ReferenceBackend"
    subgraph = fold_quantized(lowered[0].original_module)
    names = {op.name() for op in (n.target for n in subgraph.graph.nodes if n.op == "call_function")}
    assert {"reference_backend::qconv2d", "reference_backend::qadd", "reference_backend::qlinear"} <= names, (
        names
    )
    assert not any(name.startswith("quantized_decomposed::") for name in names), names
    pte = edge.to_executorch().buffer
    program = Runtime.get().load_program(pte)
    method = program.load_method("forward")
    for seed in range(3):
        batch = _quant_inputs(torch.Generator().manual_seed(100 + seed))
        actual = method.execute(list(batch))
        reference = subgraph.module()(*batch)
        for a, r in zip(actual, reference):
            assert torch.equal(a, r), (a - r).abs().max()


def test_requantize_rounds_half_up_and_saturates():
    m, s = qmath.fixed_point(0.5)
    assert (m, s) == (2**30, 31)
    acc = torch.tensor([3, -3, 2**40], dtype=torch.int64)
    assert qmath.requantize(acc, m, s).tolist() == [
        2,
        -1,
        2**30 - 1 + 1,
    ]  # 1.5 -> 2, -1.5 -> -1; int32 saturated
