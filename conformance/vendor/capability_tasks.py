"""Vendor-process tasks of the quantized, dynamic-shape and composition checks
(registered in ``conformance.vendor.task_registry``, called through ``Context.call``).
Each follows the contract of ``conformance.vendor.envelope``:
it returns plain data or raises VendorError naming what failed.
"""

from __future__ import annotations

from typing import Any

from backend_kit.aot import schema_name
from conformance.vendor.bootstrap import descriptor
from conformance.vendor.core_tasks import float_sample, made_sample, observe, partitioners
from conformance.vendor.envelope import VendorError, step, vendor_call
from conformance.vendor.records import pack
from conformance.vendor.sample_quantization import (
    DEQUANTIZE_OPS,
    QUANTIZE_OPS,
    calibration_batches,
    made_quantizer,
    output_scales,
    quantize,
)

XNNPACK_ID = "XnnpackBackend"


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _to_pte(edge, what: str, config=None) -> bytes:
    program = vendor_call(f"to_executorch() of {what}", edge.to_executorch, *([config] if config else []))
    return bytes(program.buffer)


def _records_summary(records) -> list[tuple[str, str]]:
    """(backend id, operator) of every operator a partitioner tagged."""
    out = []
    for r in records:
        for _node, op, tag in r.tagged_ops:
            out.append((r.tags.get(tag, ("?",))[0], op))
    return out


def _cpu_quant_nodes_at_delegates(graph_module, backend_id: str) -> list[str]:
    """Quantize/dequantize nodes left on CPU right next to a delegate of ``backend_id``:
    a dequantize feeding it, or a quantize fed by it (through getitem)."""
    found = []
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or "executorch_call_delegate" not in str(node.target):
            continue
        lowered = getattr(graph_module, node.args[0].target, None)
        if getattr(lowered, "backend_id", None) != backend_id:
            continue
        for arg in node.args[1:]:
            if hasattr(arg, "op") and arg.op == "call_function" and schema_name(arg.target) in DEQUANTIZE_OPS:
                found.append(f"{arg.name} ({schema_name(arg.target)}) feeds the delegate")
        for item in node.users:
            for user in item.users:
                if user.op == "call_function" and schema_name(user.target) in QUANTIZE_OPS:
                    found.append(f"{user.name} ({schema_name(user.target)}) takes a delegate output")
    return found


def _delegate_count(graph_module, backend_id: str) -> int:
    """executorch_call_delegate nodes of the lowered graph that call a delegate of ``backend_id``."""
    count = 0
    for node in graph_module.graph.nodes:
        if node.op == "call_function" and "executorch_call_delegate" in str(node.target):
            lowered = getattr(graph_module, node.args[0].target, None)
            count += getattr(lowered, "backend_id", None) == backend_id
    return count


# --------------------------------------------------------------------------- quantized


def quantized_flow(name: str) -> dict[str, Any]:
    """Quantizes sample ``name`` with the declared quantizer (export, prepare_pt2e, calibrate,
    convert_pt2e), lowers it with the backend's partitioners and reports what the checks need."""
    import torch
    from executorch.exir import to_edge_transform_and_lower

    module, inputs = float_sample(name)
    quantizer, kind, is_quantizer = made_quantizer()
    result: dict[str, Any] = {"quantizer": kind, "is_quantizer": is_quantizer}
    if not result["is_quantizer"]:
        return result
    what = f"sample model {name!r}"
    converted = quantize(what, module, calibration_batches(name, inputs), quantizer, kind)
    with torch.no_grad():
        expected = _outputs(vendor_call("forward of the converted model", converted, *inputs))
    scales = output_scales(converted)
    records: list = []
    observed = [observe(p, records) for p in partitioners("default")]
    exported = vendor_call(
        "torch.export.export of the converted model", torch.export.export, converted, inputs
    )
    edge = vendor_call(
        "lowering the converted model with the backend's partitioners",
        to_edge_transform_and_lower,
        exported,
        partitioner=observed,
    )
    step("inspecting the lowered graph")
    graph_module = edge.exported_program().graph_module
    leftovers = _cpu_quant_nodes_at_delegates(graph_module, descriptor().backend_id)
    cpu_ops = sorted(
        {
            schema_name(n.target) or str(n.target)
            for n in graph_module.graph.nodes
            if n.op == "call_function" and schema_name(n.target)
        }
    )
    result.update(
        delegates=_delegate_count(graph_module, descriptor().backend_id),
        inputs=pack(list(inputs)),
        expected=pack(expected),
        scales=scales,
        leftovers=leftovers,
        cpu_ops=cpu_ops,
        claimed=_records_summary(records),
    )
    # QNT-2 judges the lowered graph; a program that cannot be written fails QNT-3 only.
    try:
        result["pte"] = _to_pte(edge, f"quantized sample model {name!r}")
    except VendorError as exc:
        result["pte"], result["pte_error"] = None, str(exc)
    return result


# --------------------------------------------------------------------------- dynamic shapes


def _size_sets(
    bounds: dict[str, int], inputs_dims: list[list[Any]]
) -> list[tuple[str, dict[str, int], bool]]:
    """(label, symbol -> size, within the bounds) for the sizes the checks run."""
    names = sorted(bounds)
    sets = [
        ("every dynamic dimension 1", dict.fromkeys(names, 1), True),
        ("every dynamic dimension at its bound", dict(bounds), True),
        (
            "dynamic dimensions between 1 and their bounds",
            {s: max(1, (bounds[s] + 1) // 2) for s in names},
            True,
        ),
    ]
    # Above one bound but within ExecuTorch's capacity (bound product) for every input holding it:
    # such a size passes ExecuTorch's own check and reaches the backend.
    for s in names:
        sizes = dict.fromkeys(names, 1)
        sizes[s] = bounds[s] + 1
        fits = True
        for dims in inputs_dims:
            syms = [d for d in dims if isinstance(d, str)]
            if s in syms:
                capacity = 1
                for t in syms:
                    capacity *= bounds[t]
                used = 1
                for t in syms:
                    used *= sizes[t]
                fits = fits and used <= capacity
        if fits:
            sets.append((f"dimension {s} at {bounds[s] + 1}, above its bound {bounds[s]}", sizes, False))
            break
    sets.append(("every dynamic dimension one above its bound", {s: bounds[s] + 1 for s in names}, False))
    return sets


def _dim_names(spec: Any, inputs_dims: list[list[Any]]) -> dict[str, str]:
    """Symbol -> the name given to torch.export.Dim, for the messages ("tokens" rather than "s27"),
    where ``spec`` (a tuple or dict of per-input {axis: Dim} dicts or lists) says it unambiguously."""
    per_input = (
        list(spec.values())
        if isinstance(spec, dict)
        else list(spec)
        if isinstance(spec, (list, tuple))
        else []
    )
    if len(per_input) != len(inputs_dims):
        return {}
    names: dict[str, str] = {}
    for dims, axes in zip(inputs_dims, per_input):
        items = (
            axes.items()
            if isinstance(axes, dict)
            else enumerate(axes)
            if isinstance(axes, (list, tuple))
            else ()
        )
        for axis, dim in items:
            label = getattr(dim, "__name__", None)
            if isinstance(axis, int) and 0 <= axis < len(dims) and isinstance(dims[axis], str) and label:
                names.setdefault(dims[axis], label)
    return names if len(set(names.values())) == len(names) else {}


def dynamic_flow(name: str) -> dict[str, Any]:
    """Exports sample ``name`` with the declared dynamic shapes, lowers it, and makes inputs and eager
    outputs for sizes at 1, between, at and above the bounds."""
    import torch
    from executorch.exir import to_edge_transform_and_lower

    support = descriptor().dynamic_shapes
    module, inputs = made_sample(name)
    spec = vendor_call("dynamic_shapes.dynamic_shapes()", support.dynamic_shapes)
    exported = vendor_call(
        f"torch.export.export of sample model {name!r} with dynamic shapes",
        torch.export.export,
        module,
        inputs,
        dynamic_shapes=spec,
    )
    bounds: dict[str, int] = {}
    inputs_dims: list[list[Any]] = []
    user_inputs = set(exported.graph_signature.user_inputs)
    for node in exported.graph.nodes:
        if node.op != "placeholder" or node.name not in user_inputs:
            continue
        dims: list[int | str] = []
        for d in node.meta["val"].shape:
            if isinstance(d, int):
                dims.append(d)
                continue
            expr = d.node.expr
            bound = exported.range_constraints.get(expr)
            if bound is None or not getattr(expr, "is_symbol", False):
                raise VendorError(f"input {node.name}: dimension {expr} is not a plain torch.export.Dim")
            upper = int(bound.upper) if bound.upper != float("inf") and str(bound.upper) != "int_oo" else None
            if upper is None:
                raise VendorError(
                    f"input {node.name}: dimension {expr} has no upper bound (give Dim(..., max=...))"
                )
            bounds[str(expr)] = upper
            dims.append(str(expr))
        inputs_dims.append(dims)
    if not bounds:
        raise VendorError(f"sample model {name!r} exported with dynamic_shapes() has no dynamic dimension")
    renamed = _dim_names(spec, inputs_dims)
    bounds = {renamed.get(sym, sym): bound for sym, bound in bounds.items()}
    inputs_dims = [[renamed.get(d, d) if isinstance(d, str) else d for d in dims] for dims in inputs_dims]
    edge = vendor_call(
        f"lowering sample model {name!r} (dynamic shapes) with the backend's partitioners",
        to_edge_transform_and_lower,
        exported,
        partitioner=partitioners("default"),
    )
    pte = _to_pte(edge, f"sample model {name!r} with dynamic shapes")
    generator = torch.Generator().manual_seed(0)
    cases = []
    for label, sizes, within in _size_sets(bounds, inputs_dims):
        made = [
            torch.randn(*[sizes[d] if isinstance(d, str) else d for d in dims], generator=generator)
            for dims in inputs_dims
        ]
        case = {
            "label": label,
            "within": within,
            "inputs": pack(made),
            "shapes": [list(t.shape) for t in made],
        }
        # above a bound too: a backend that computes such a size must compute it right (C-DYN-2)
        with torch.no_grad():
            case["expected"] = pack(
                _outputs(vendor_call(f"eager forward of sample model {name!r}", module, *made))
            )
        cases.append(case)
    return {"pte": pte, "bounds": bounds, "cases": cases}


# --------------------------------------------------------------------------- composition


def composition_flow(name: str) -> dict[str, Any]:
    """Lowers sample ``name`` with [*make_partitioners(), XnnpackPartitioner()]."""
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    module, inputs = made_sample(name)
    records: list = []
    observed = [observe(p, records) for p in [*partitioners("default"), XnnpackPartitioner()]]
    exported = vendor_call(
        f"torch.export.export of sample model {name!r}", torch.export.export, module, inputs
    )
    edge = vendor_call(
        f"lowering sample model {name!r} with the backend's partitioners and XnnpackPartitioner()",
        to_edge_transform_and_lower,
        exported,
        partitioner=observed,
    )
    return {
        "pte": _to_pte(edge, f"sample model {name!r} (composition)"),
        "claimed": _records_summary(records),
    }
