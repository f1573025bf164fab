"""Vendor-process task of the model tier (``task_registry.LOWER_MODEL``).

``lower_model`` makes one architecture of ``conformance.models.architectures`` (random weights from
its seed), runs it in eager PyTorch, exports it, lowers it with the backend's partitioners and
serializes it; it counts the operator nodes of the lowered program: those inside a delegate of the
backend (from each delegate's original subgraph), inside delegates of other backends, and left on
ExecuTorch's CPU kernels (by operator). For a backend that takes only quantized graphs
(``quantized.every_sample``) the architecture is first quantized with the backend's quantizer, calibrated
on its input (``conformance.vendor.sample_quantization``), and its eager outputs are the converted model's.
"""

from __future__ import annotations

from typing import Any

from conformance.fx_names import operator_name, operator_nodes
from conformance.vendor.bootstrap import descriptor
from conformance.vendor.core_tasks import partitioners
from conformance.vendor.envelope import VendorError, step, vendor_call
from conformance.vendor.records import pack


def placement(edge_program: Any, backend_id: str) -> dict[str, Any]:
    """Operator nodes of a lowered edge program: delegated to ``backend_id``, to other backends, on CPU."""
    graph_module = edge_program.graph_module
    own = delegates = 0
    others: dict[str, int] = {}
    cpu: dict[str, int] = {}
    for node in operator_nodes(graph_module.graph):
        if "executorch_call_delegate" in str(node.target):
            lowered = getattr(graph_module, node.args[0].target)
            inner = len(operator_nodes(lowered.original_module.graph))
            if lowered.backend_id == backend_id:
                own += inner
                delegates += 1
            else:
                others[lowered.backend_id] = others.get(lowered.backend_id, 0) + inner
        else:
            name = operator_name(node.target)
            cpu[name] = cpu.get(name, 0) + 1
    total = own + sum(others.values()) + sum(cpu.values())
    return {
        "nodes": total,
        "delegated_nodes": own,
        "delegates": delegates,
        "other_backends": dict(sorted(others.items())),
        "cpu_ops": dict(sorted(cpu.items(), key=lambda kv: (-kv[1], kv[0]))),
    }


def lower_model(name: str) -> dict[str, Any]:
    """Makes, runs, exports and lowers the architecture ``name``; see the module docstring."""
    import torch
    from executorch.exir import to_edge_transform_and_lower

    from conformance.models.architectures import MODELS

    model = MODELS[name]
    step(f"making and running model {name!r} in eager PyTorch")
    module, inputs = model.make()
    module, quantized = _as_the_backend_takes_it(name, module, tuple(inputs))
    with torch.no_grad():
        out = module(*inputs)
    expected = list(out) if isinstance(out, (tuple, list)) else [out]
    step(f"torch.export.export of model {name!r}")
    try:
        exported = torch.export.export(module, tuple(inputs))
    except Exception as exc:  # noqa: BLE001  (not the vendor's code: the suite's model cannot be exported)
        raise VendorError(
            f"the suite could not export model {name!r}: {type(exc).__name__}: {exc}"[:2000]
        ) from None
    made = partitioners("default")
    edge = vendor_call(
        f"lowering model {name!r} with the backend's partitioners",
        to_edge_transform_and_lower,
        exported,
        partitioner=made,
    )
    placed = placement(edge.exported_program(), descriptor().backend_id)
    program = vendor_call(f"to_executorch() of model {name!r}", edge.to_executorch)
    return {
        "pte": bytes(program.buffer),
        "inputs": pack(inputs),
        "expected": pack(expected),
        **placed,
        **quantized,
    }


def _as_the_backend_takes_it(name: str, module: Any, inputs: tuple[Any, ...]) -> tuple[Any, dict[str, Any]]:
    """``module``, or for a backend whose ``quantized.every_sample`` is set the module quantized with its
    quantizer, with ``quantizer`` (its type's name) and ``output_scale`` (the largest scale of the converted
    outputs' dequantize, None when none has one) for the row."""
    if not descriptor().quantizes_every_sample:
        return module, {}
    from conformance.vendor.sample_quantization import as_the_backend_takes_it

    quantized = as_the_backend_takes_it(f"model {name!r}", module.eval(), [inputs])
    scales = [s for s in quantized.output_scales if s is not None]
    return quantized.module, {
        "quantizer": quantized.quantizer,
        "output_scale": max(scales) if scales else None,
    }
