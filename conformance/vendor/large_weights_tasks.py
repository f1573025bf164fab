"""Vendor-process task of NDATA-5 (``task_registry.LARGE_WEIGHTS``, judged by ``conformance.checks.named_data``).

``large_weights_flow`` makes the program of ``conformance.large_weights`` (``LAYERS`` linears without bias,
seeded weights of ``boundary / 16`` bytes each), computes its eager outputs, lowers it with the backend's
named-data partitioners and writes model.pte and the .ptd files into a directory the judge gave. The
weights are drawn with a seeded generator in this process and never sent to the judge: it gets the
inputs, the eager outputs, how many linears were delegated, and the first bytes of each weight (to name,
in a failure, where in the .ptd the weight of a wrong output lies, when the backend stores weights as they
are). Memory is released before the task returns: the runtime reads the .ptd afterwards in this process.
"""

from __future__ import annotations

import contextlib
import gc
from pathlib import Path
from typing import Any

from conformance.large_weights import COLUMNS, LAYERS, Size
from conformance.vendor.core_tasks import partitioners
from conformance.vendor.envelope import step, vendor_call
from conformance.vendor.records import pack

#: Bytes of each weight's start returned to the judge.
PREFIX_BYTES = 64
#: The seed of the weights and the input.
SEED = 5


def make_program(size: Size) -> tuple[Any, tuple[Any, ...]]:
    """The module (eval mode) and its one input: weights uniform in [-1/64, 1/64), the input in [-1, 1)."""
    import torch

    class LargeWeights(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            generator = torch.Generator().manual_seed(SEED)
            self.layers = torch.nn.ModuleList()
            for _ in range(LAYERS):
                # Made without torch's own initialization and drawn in place: one pass over each weight,
                # where nn.Linear's init, a draw and a copy took three (a third of the task at 4 GiB).
                layer = torch.nn.Linear(COLUMNS, size.rows, bias=False, device="meta")
                weight = torch.empty(size.rows, COLUMNS).uniform_(-1 / 64, 1 / 64, generator=generator)
                layer.weight = torch.nn.Parameter(weight, requires_grad=False)
                self.layers.append(layer)

        def forward(self, x: Any) -> tuple[Any, ...]:
            return tuple(layer(x) for layer in self.layers)

    module = LargeWeights().eval()
    x = torch.rand(1, COLUMNS, generator=torch.Generator().manual_seed(SEED + 1)) * 2 - 1
    return module, (x,)


def delegated_linears(edge_program: Any, backend_id: str) -> int:
    """How many linear (or mm/addmm) nodes of ``edge_program`` run in delegates of ``backend_id``."""
    graph_module = edge_program.graph_module
    count = 0
    for node in graph_module.graph.nodes:
        if node.op == "call_function" and "executorch_call_delegate" in str(node.target):
            lowered = getattr(graph_module, node.args[0].target)
            if lowered.backend_id == backend_id:
                count += sum(
                    1
                    for n in lowered.original_module.graph.nodes
                    if n.op == "call_function" and any(k in str(n.target) for k in ("linear", "mm"))
                )
    return count


def large_weights_flow(boundary: int, out_dir: str) -> dict[str, Any]:
    """Makes, lowers and writes the program whose weights cross ``boundary`` (module docstring); returns
    {'inputs', 'expected' (packed), 'delegated': linears in the backend's delegates, 'prefixes': the first
    bytes of each weight, 'pte': its path, 'files': {name: path} of the .ptd files}."""
    import torch
    from executorch.exir import to_edge_transform_and_lower

    from conformance.vendor.bootstrap import descriptor

    size = Size(boundary)
    what = f"the large-weights program ({LAYERS} linears of {size.weight_bytes} bytes each)"
    step(f"making {what} and its eager outputs")
    module, inputs = make_program(size)
    with torch.no_grad():
        expected = list(module(*inputs))
    prefixes = [
        layer.weight.detach().reshape(-1)[: PREFIX_BYTES // 4].numpy().tobytes() for layer in module.layers
    ]
    step(f"torch.export.export of {what}")
    exported = torch.export.export(module, inputs)
    del module
    edge = vendor_call(
        f"lowering {what} with the backend's named_data.make_partitioners()",
        to_edge_transform_and_lower,
        exported,
        partitioner=partitioners("named_data"),
    )
    del exported
    delegated = delegated_linears(edge.exported_program(), descriptor().backend_id)
    program = vendor_call(f"to_executorch() of {what}", edge.to_executorch)
    del edge
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    step(f"writing {what}")
    (out / "model.pte").write_bytes(bytes(program.buffer))
    # executorch 1.5 asserts when the program has no external data: there is no file to write
    with contextlib.suppress(AssertionError):
        program.write_tensor_data_to_file(str(out))
    del program
    gc.collect()
    return {
        "inputs": pack(list(inputs)),
        "expected": pack(expected),
        "delegated": delegated,
        "prefixes": prefixes,
        "pte": str(out / "model.pte"),
        "files": {p.name: str(p) for p in sorted(out.glob("*.ptd"))},
    }
