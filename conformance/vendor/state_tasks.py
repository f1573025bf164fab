"""Vendor-process task of the state check (``task_registry.STATE_FLOW``, judged by
``conformance.checks.state``).

The suite's own stateful program: a static KV cache, as LLM programs keep one. Each call projects
its input ``x`` with a linear layer, writes the result into row ``pos`` of a registered buffer
(``index_copy_``: ExecuTorch stores the buffer as mutable data and writes the update back after each
execute), and returns the whole cache read through a second linear layer, so that every step's
output depends on every earlier step. ``state_flow`` lowers it with the backend's partitioners and
makes the per-step inputs and what eager PyTorch gives for them run the same way, plus what the
usual defects would give (a state dropped between calls, one state shared by two loaded methods, a
state carried into a new load), for the check's messages.
"""

from __future__ import annotations

from typing import Any

from conformance.vendor.vendor_bootstrap import descriptor
from conformance.vendor.vendor_envelope import VendorError, step, vendor_call
from conformance.vendor.vendor_records import pack
from conformance.vendor.vendor_tasks import partitioners

#: Rows of the cache, and the steps of each sequence (one row written per step).
STEPS = 8
#: Width of the projection and of a cache row.
WIDTH = 8
#: The name of the registered buffer.
BUFFER = "cache"
#: Seeds of the two sequences the check interleaves; the second writes its rows in reverse order.
SEEDS = (1, 2)


def make_program() -> Any:
    """The KV-cache module in eval mode, its weights from torch.manual_seed(0), its cache zero."""
    import torch

    class KVCacheProgram(torch.nn.Module):
        cache: torch.Tensor

        def __init__(self) -> None:
            super().__init__()
            self.project = torch.nn.Linear(WIDTH, WIDTH)
            self.read = torch.nn.Linear(WIDTH, WIDTH)
            self.register_buffer(BUFFER, torch.zeros(STEPS, WIDTH))

        def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
            self.cache.index_copy_(0, pos, self.project(x))
            return self.read(self.cache)

    torch.manual_seed(0)
    module = KVCacheProgram().eval()
    for p in module.parameters():
        p.requires_grad_(False)
    return module


def sequence(seed: int, reverse: bool) -> list[tuple[Any, Any]]:
    """(x, pos) of each step: x from a generator seeded with ``seed``; pos 0, 1, ... (or from the end)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    return [
        (
            torch.randn(1, WIDTH, generator=generator),
            torch.tensor([STEPS - 1 - k if reverse else k], dtype=torch.int64),
        )
        for k in range(STEPS)
    ]


def run_eager(module: Any, steps: list[tuple[Any, Any]]) -> list[Any]:
    """The output of each step of ``steps`` on ``module``, its state carried."""
    import torch

    with torch.no_grad():
        return [module(x, pos).clone() for x, pos in steps]


def _fresh(state: dict[str, Any]) -> Any:
    module = make_program()
    module.load_state_dict(state)
    return module


def _schema(target: Any) -> str:
    name = getattr(target, "name", None)
    if callable(name):
        try:
            return str(name())
        except TypeError:
            pass
    return getattr(target, "__name__", str(target))


def placement(edge_program: Any, backend_id: str) -> dict[str, Any]:
    """Which operators of the lowered program run in a delegate of ``backend_id`` and which on CPU."""
    import operator

    graph_module = edge_program.graph_module
    delegated: set[str] = set()
    cpu: set[str] = set()
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        if "executorch_call_delegate" in str(node.target):
            lowered = getattr(graph_module, node.args[0].target)
            if lowered.backend_id == backend_id:
                delegated |= {
                    _schema(n.target)
                    for n in lowered.original_module.graph.nodes
                    if n.op == "call_function" and n.target is not operator.getitem
                }
            continue
        cpu.add(_schema(node.target))
    return {"delegated": sorted(delegated), "cpu": sorted(cpu)}


def state_flow(which: str) -> dict[str, Any]:
    """Lowers the KV-cache program with the backend's partitioners (``which``: 'default', or
    'mutable_state' for those the descriptor declares to claim the mutated buffer) and returns the
    program, the two sequences' inputs, and the eager outputs the check compares with."""
    import torch
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass

    step("making the KV-cache program and its eager outputs")
    module = make_program()
    state = {k: v.clone() for k, v in module.state_dict().items()}
    first, second = sequence(SEEDS[0], reverse=False), sequence(SEEDS[1], reverse=True)
    carried = [run_eager(_fresh(state), first), run_eager(_fresh(state), second)]
    # What the defects give: each step on a program that forgot the earlier ones; both sequences fed,
    # interleaved, to one state; the first sequence run again on the state it left.
    dropped = [[run_eager(_fresh(state), [s])[0] for s in seq] for seq in (first, second)]
    one = _fresh(state)
    shared: list[list[Any]] = [[], []]
    for a, b in zip(first, second):
        shared[0] += run_eager(one, [a])
        shared[1] += run_eager(one, [b])
    left = _fresh(state)
    run_eager(left, first)
    continued = run_eager(left, first)

    step("torch.export.export of the KV-cache program")
    try:
        exported = torch.export.export(module, first[0])
    except Exception as exc:  # noqa: BLE001  (not the vendor's code: the suite's program cannot be exported)
        raise VendorError(
            f"the suite could not export its KV-cache program: {type(exc).__name__}: {exc}"[:2000]
        ) from None
    if which == "mutable_state":
        made = vendor_call("mutable_state.make_partitioners()", descriptor().mutable_state.make_partitioners)
        try:
            found = list(made)
        except TypeError:
            raise VendorError(
                f"mutable_state.make_partitioners() returned {type(made).__name__}, not a sequence of partitioners"
            ) from None
        label = "mutable_state.make_partitioners()"
    else:
        found, label = partitioners("default"), "make_partitioners()"
    edge = vendor_call(
        f"lowering the KV-cache program with the backend's {label}",
        to_edge_transform_and_lower,
        exported,
        partitioner=found,
    )
    placed = placement(edge.exported_program(), descriptor().backend_id)
    # The cache starts as the module's (zeros) in every new load, not as whatever memory holds.
    config = ExecutorchBackendConfig(passes=[InitializedMutableBufferPass([BUFFER])])
    program = vendor_call("to_executorch() of the KV-cache program", edge.to_executorch, config)
    return {
        "pte": bytes(program.buffer),
        "steps": STEPS,
        "inputs": [[pack([x, pos]) for x, pos in seq] for seq in (first, second)],
        "positions": [[int(pos) for _, pos in seq] for seq in (first, second)],
        "expected": [[pack([o]) for o in outs] for outs in carried],
        "dropped": [[pack([o]) for o in outs] for outs in dropped],
        "shared": [[pack([o]) for o in outs] for outs in shared],
        "continued": [pack([o]) for o in continued],
        **placed,
    }
