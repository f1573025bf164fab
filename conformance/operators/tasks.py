"""Vendor-process tasks of the operator checks (called as 'conformance.operators.tasks:NAME').

``lower_batch`` makes the cases (inputs and eager outputs), puts them side by
side into one module (each case's inputs in, its outputs out), exports it,
lowers it with the vendor's partitioners and serializes it; for every case it
says which operator nodes of the lowered top-level graph its outputs depend on
outside a delegate of the backend. One lowering serves many cases; the parent
bisects a batch whose lowering, load or execution fails. A batch of several
cases whose lowering fails after the partitioners ran is answered with
``{"failed": message, "claimed": keys}`` rather than an error: the cases a
partitioner tagged, so that the parent lowers the others together once and
bisects only the claimed ones.
"""

from __future__ import annotations

import copy
from typing import Any

from conformance.fx_names import operator_name
from conformance.operators.nan_modes import ignoring_nan
from conformance.operators.subnormals import flushing_subnormals
from conformance.operators.support import quantized_by_backend
from conformance.vendor.bootstrap import descriptor
from conformance.vendor.core_tasks import observe, partitioners
from conformance.vendor.envelope import VendorError, step, vendor_call
from conformance.vendor.records import pack
from conformance.vendor.sample_quantization import DEQUANTIZE_OPS, QUANTIZE_OPS, load_quantized_kernels


def _flat(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _magnitude(module: Any, inputs: list[Any]) -> float:
    """The largest finite result of ``module`` on the absolute values of its inputs and parameters, in
    float64: the sum of the terms' magnitudes that bounds a K-term sum's rounding error. NaN and infinite
    results (a NaN or an infinity among the inputs) are left out: they would make the tolerance NaN or
    infinite, and a non-finite result is compared exactly anyway. 1.0 if no result is finite."""
    import torch

    m = copy.deepcopy(module).to(torch.float64)
    with torch.no_grad():
        for p in list(m.parameters()) + list(m.buffers()):
            if p.is_floating_point():
                p.abs_()
        outs = _flat(m(*[x.abs().to(torch.float64) if x.is_floating_point() else x for x in inputs]))
    finite = [o.abs()[torch.isfinite(o)] for o in outs if o.is_floating_point()]
    values = [float(f.max()) for f in finite if f.numel()]
    return max(values, default=1.0)


def corpus_tolerance(
    c: Any, module: Any, inputs: list[Any], expected: list[Any]
) -> tuple[float, float, float]:
    """(rtol, atol, magnitude) of case ``c`` by the corpus: its tolerance at the dtype of its first output
    ``expected[0]``, the magnitude of its terms where the tolerance grows with them, and the declared
    ``max_steps`` for quantized results."""
    magnitude = _magnitude(module, inputs) if c.tolerance.per_term else 1.0
    out_dtype = str(expected[0].dtype).removeprefix("torch.")
    rtol, atol = c.tolerance.bounds(out_dtype, magnitude, c.reduction)
    if c.tolerance.steps:
        quantized = descriptor().quantized
        atol = float(quantized.max_steps) if quantized is not None else 0.0
    return rtol, atol, magnitude


class _Batch:
    """A module running the cases side by side."""

    def __new__(cls, modules: list[Any], arity: list[int]) -> Any:  # a torch.nn.Module
        import torch

        class Batch(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.cases = torch.nn.ModuleList(modules)

            def forward(self, *xs):
                outs, at = [], 0
                for module, n in zip(self.cases, arity):
                    outs += _flat(module(*xs[at : at + n]))
                    at += n
                return tuple(outs)

        return Batch()


def _placement(
    edge_program: Any, backend_id: str, output_ranges: list[tuple[int, int]]
) -> list[dict[str, Any]]:
    """Per case: the operators its outputs depend on outside a delegate of ``backend_id``, the backends
    of the delegates they depend on."""
    import operator

    graph_module = edge_program.graph_module
    graph = graph_module.graph
    output = next(n for n in graph.nodes if n.op == "output")
    results = list(output.args[0])
    placed = []
    for start, stop in output_ranges:
        cpu, backends, seen = set(), set(), set()
        stack = [r for r in results[start:stop] if hasattr(r, "op")]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            if node.op == "call_function":
                if node.target is operator.getitem:
                    pass
                elif "executorch_call_delegate" in str(node.target):
                    lowered = getattr(graph_module, node.args[0].target)
                    backends.add(lowered.backend_id)
                    continue  # what feeds a delegate is checked by its own case
                else:
                    cpu.add(operator_name(node.target))
            stack.extend(node.all_input_nodes)
        placed.append({"cpu_ops": sorted(cpu), "backends": sorted(backends)})
    return placed


def _claimed(program: Any, output_ranges: list[tuple[int, int]]) -> set[int]:
    """The indexes of the cases one of whose nodes the partitioner tagged in ``program`` (the tagged program
    it returned, before the lowering fuses anything; its outputs are the batch's, in order)."""
    output = next(n for n in program.graph.nodes if n.op == "output")
    results = list(output.args[0])
    claimed = set()
    for at, (start, stop) in enumerate(output_ranges):
        stack, seen = [r for r in results[start:stop] if hasattr(r, "op")], set()
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            if node.op == "call_function" and node.meta.get("delegation_tag"):
                claimed.add(at)
                break
            stack.extend(node.all_input_nodes)
    return claimed


def _watch(partitioner: Any, output_ranges: list[tuple[int, int]], claimed: list[set[int] | None]) -> Any:
    """``partitioner``, its partition() adding to ``claimed`` the cases the program it returns tags."""
    inner = partitioner.partition

    def partition(exported_program):
        result = inner(exported_program)
        try:
            claimed.append(_claimed(result.tagged_exported_program, output_ranges))
        except Exception:  # noqa: BLE001  (a program this cannot read: the parent halves a failing batch)
            claimed.append(None)
        return result

    partitioner.partition = partition
    return partitioner


#: The quantize and dequantize operators: in a case quantized by the backend's quantizer, those at its boundary
#: (its float inputs quantized, its outputs dequantized) are the program's, not the operator's.
QUANTIZE_DEQUANTIZE = frozenset(QUANTIZE_OPS + DEQUANTIZE_OPS)

#: The relative rounding of a dequantized float32 value ((q - zero_point) * scale): 4 units in the last place.
DEQUANTIZED_ROUNDING = 4 * 2.0**-23


def _quantized_batch(batch: Any, flat_inputs: list[Any], per_case: list[dict[str, Any]], ranges) -> Any:
    """The batch quantized with the backend's quantizer as one program (as a user quantizes the model they
    lower: a quantizer may mark what it annotated in metadata that only the converted program itself carries),
    calibrated on the cases' inputs; each case's record gets the converted outputs as its expected ones, the
    quantizer's name, and ``max_steps`` steps of its outputs' scales as its tolerance."""
    import torch

    from conformance.vendor.sample_quantization import as_the_backend_takes_it

    quantized = as_the_backend_takes_it(f"{len(per_case)} operator case(s)", batch, [tuple(flat_inputs)])
    converted, scales = quantized.module, quantized.output_scales
    with torch.no_grad():
        outputs = _flat(converted(*flat_inputs))
    steps = float(descriptor().quantized.max_steps)
    for record, (start, stop) in zip(per_case, ranges):
        record["expected"] = outputs[start:stop]
        record["quantized_with"] = quantized.quantizer.rsplit(".", 1)[-1]
        mine = [x for x in scales[start:stop] if x is not None]
        if mine and len(mine) == stop - start:
            # max_steps steps of the output's scale; the float32 rounding of dequantized values (a few units
            # in the last place of each value) on top, so that a difference of exactly max_steps steps passes
            record.update(rtol=DEQUANTIZED_ROUNDING, atol=steps * max(mine))
    return converted


def lower_batch(keys: list[str]) -> dict[str, Any]:
    """Makes, exports and lowers the cases ``keys`` together; see the module docstring."""
    import torch
    from executorch.exir import to_edge_transform_and_lower

    from conformance.operators.corpus import case

    modules: list[Any] = []
    arity: list[int] = []
    flat_inputs: list[Any] = []
    per_case: list[dict[str, Any]] = []
    ranges: list[tuple[int, int]] = []
    dynamic: list[Any] = []
    by_quantizer: list[
        bool
    ] = []  # per case: quantized by the backend's quantizer (support.quantized_by_backend)
    for at, key in enumerate(keys):
        c = case(key)
        dynamic += c.dynamic_shapes(f"case{at}")
        step(f"making and running {c.describe()} in eager PyTorch")
        module, inputs = c.make()
        with torch.no_grad():
            expected = _flat(module(*inputs))
        rtol, atol, magnitude = corpus_tolerance(c, module, inputs, expected)
        by_quantizer.append(quantized_by_backend(descriptor(), c))
        nan_ignored = None if by_quantizer[-1] else ignoring_nan(c.op, module, inputs)
        flushed = None if by_quantizer[-1] else flushing_subnormals(module, inputs)
        start = sum(len(p["expected"]) for p in per_case)
        ranges.append((start, start + len(expected)))
        per_case.append(
            {
                "key": key,
                "expected": expected,
                "rtol": rtol,
                "atol": atol,
                "magnitude": magnitude,
                "inputs": len(inputs),
                # the outputs under nan_mode IGNORE, where they differ from eager's (conformance/operators/nan_modes.py)
                "expected_nan_ignored": nan_ignored,
                # the outputs with subnormal operands and results flushed (conformance/operators/subnormals.py)
                "expected_flushed": flushed,
            }
        )
        modules.append(module)
        arity.append(len(inputs))
        flat_inputs += inputs
    if any(by_quantizer) or any("quantized" in case(key).traits for key in keys):
        # As a user whose program keeps quantize/dequantize nodes on CPU must (C-QNT-2): the program is still
        # written, and OPS-1 names what stayed on CPU.
        load_quantized_kernels()
    batch = _Batch(modules, arity).eval()
    if any(by_quantizer):
        if not all(by_quantizer):
            raise VendorError(
                "a batch mixes cases quantized by the backend's quantizer with others (a defect of the suite)"
            )
        batch = _quantized_batch(batch, flat_inputs, per_case, ranges)
    step(f"torch.export.export of {len(keys)} operator cases")
    try:
        shapes = (tuple(dynamic),) if any(d is not None for d in dynamic) else None
        exported = torch.export.export(batch, tuple(flat_inputs), dynamic_shapes=shapes)
    except Exception as exc:  # noqa: BLE001  (not the vendor's code: the case itself cannot be exported)
        raise VendorError(
            f"the suite could not export the case(s): {type(exc).__name__}: {exc}"[:2000]
        ) from None
    records: list[Any] = []
    claimed: list[set[int] | None] = []  # per partition() call; None: unknown
    observed = [_watch(observe(p, records), ranges, claimed) for p in partitioners("default")]
    cases = f"{len(keys)} operator cases" if len(keys) > 1 else case(keys[0]).describe()
    what = f"lowering {cases} with the backend's partitioners"
    try:
        edge = vendor_call(what, to_edge_transform_and_lower, exported, partitioner=observed)
        placed = _placement(edge.exported_program(), descriptor().backend_id, ranges)
        for p, where in zip(per_case, placed):
            if "quantized_with" in p:
                where["cpu_ops"] = [op for op in where["cpu_ops"] if op not in QUANTIZE_DEQUANTIZE]
        program = vendor_call(f"to_executorch() of {cases}", edge.to_executorch)
    except VendorError as exc:
        if len(keys) < 2 or not claimed or None in claimed:
            raise
        tagged = {at for found in claimed if found is not None for at in found}
        return {"failed": str(exc), "claimed": [k for at, k in enumerate(keys) if at in tagged]}
    for p, where in zip(per_case, placed):
        p.update(where)
        p["expected"] = pack(p["expected"])
        p["expected_nan_ignored"] = pack(p["expected_nan_ignored"]) if p["expected_nan_ignored"] else None
        p["expected_flushed"] = pack(p["expected_flushed"]) if p["expected_flushed"] else None
    return {"pte": bytes(program.buffer), "cases": per_case, "inputs": pack(flat_inputs)}
