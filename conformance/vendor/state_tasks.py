"""Vendor-process task of the state checks (``task_registry.STATE_FLOW``, judged by
``conformance.checks.state``).

The stateful program is made from the backend's own sample model, so every backend that runs its
sample is judged, whatever operators it claims. Two forms, the first that the sample allows:

- ``cache read by the sample`` (preferred): one registered buffer per sample input, ``STEPS`` copies
  of that input stacked along dimension 0, as a static KV cache holds ``STEPS`` rows. Each call writes
  the call's inputs into the rows of position ``pos`` (``index_copy_``: ExecuTorch keeps the buffer as
  mutable data, updated in place) and returns the sample applied to the whole buffers. The delegate
  reads the mutated buffer itself, so a runtime that scribbles on its inputs, or binds them once,
  breaks the state. Needs a sample whose eager forward and export take a larger dimension 0.
- ``cache of the sample's outputs``: the sample runs on the call's inputs; its first output, flattened,
  is written into row ``pos`` of one buffer, and the program returns a copy of the buffer. The
  delegate's output feeds the state; the state itself is read on CPU.

``state_flow`` lowers the program with the backend's partitioners and returns it with the inputs of
two sequences, what eager PyTorch gives for them, and what the usual defects would give (a state
dropped between calls, one state shared by two loaded methods, a state carried into a new load), for
the check's messages.
"""

from __future__ import annotations

from typing import Any

from conformance.fx_names import operator_name, operator_nodes
from conformance.vendor.bootstrap import descriptor
from conformance.vendor.core_tasks import made_sample, partitioners
from conformance.vendor.envelope import VendorError, step, vendor_call
from conformance.vendor.records import pack
from conformance.vendor.sample_quantization import call_keeping_node_meta

#: Rows (positions) of each buffer, and the steps of each sequence (one position written per step).
STEPS = 8
#: The forms of the program, as the result's ``form`` names them (see the module docstring).
READ_BY_SAMPLE = "cache read by the sample"
OF_OUTPUTS = "cache of the sample's outputs"
#: Seeds of the two sequences the check interleaves (used by make_inputs when the sample declares it);
#: the second writes its positions in reverse order.
SEEDS = (1, 2)


def _as_outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def make_program(sample: Any, inputs: tuple[Any, ...], form: str) -> Any:
    """A stateful module around ``sample`` (in eval mode, shared, not copied), its buffers at their
    initial values: the sample's inputs stacked ``STEPS`` times, or zeros the size of its first output.
    A sample quantized for an integer-only backend is called with its nodes' metadata kept, so the
    backend's partitioners see what its quantizer marked (``call_keeping_node_meta``)."""
    import torch

    class StatefulSample(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.sample = sample
            self.names: list[str] = []
            if form == READ_BY_SAMPLE:
                for i, x in enumerate(inputs):
                    self._buffer(f"state_{i}", torch.cat([x] * STEPS, dim=0))
            else:
                with torch.no_grad():
                    first = _as_outputs(sample(*inputs))[0]
                self._buffer("state_0", torch.zeros(STEPS, first.numel(), dtype=first.dtype))

        def _buffer(self, name: str, value: Any) -> None:
            self.register_buffer(name, value.detach().clone())
            self.names.append(name)

        def forward(self, *args: Any) -> Any:
            *xs, rows = args
            buffers = [getattr(self, name) for name in self.names]
            if form == READ_BY_SAMPLE:
                for buffer, x in zip(buffers, xs):
                    buffer.index_copy_(0, rows, x)
                return call_keeping_node_meta(self.sample, *buffers)
            first = _as_outputs(call_keeping_node_meta(self.sample, *xs))[0]
            buffers[0].index_copy_(0, rows, first.reshape(1, -1))
            return buffers[0].clone()

    return StatefulSample().eval()


def _rows(form: str, inputs: tuple[Any, ...], pos: int) -> Any:
    """The rows a step at position ``pos`` writes: dimension 0 of the inputs at ``pos``, or row ``pos``."""
    import torch

    if form == OF_OUTPUTS:
        return torch.tensor([pos], dtype=torch.int64)
    size = inputs[0].shape[0]
    return torch.arange(pos * size, (pos + 1) * size, dtype=torch.int64)


def sequence(
    name: str, make_inputs: Any, inputs: tuple[Any, ...], form: str, seed: int, reverse: bool
) -> list[tuple]:
    """The call arguments of each step: the sample's ``make_inputs`` (seeded) if it declares one, else its
    own inputs with floating-point ones scaled by a factor of the step (positive, so a sample that needs
    positive inputs still gets them); positions 0, 1, ... (or from the end)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    steps = []
    for k in range(STEPS):
        if make_inputs is not None:
            xs = tuple(vendor_call(f"make_inputs() of sample model {name!r}", make_inputs, generator))
        else:
            factor = (k + 1 + STEPS * (seed - 1)) / STEPS
            xs = tuple(x * factor if x.is_floating_point() else x.clone() for x in inputs)
        pos = STEPS - 1 - k if reverse else k
        steps.append((*xs, _rows(form, inputs, pos)))
    return steps


def run_eager(module: Any, steps: list[tuple]) -> list[list[Any]]:
    """The outputs of each step of ``steps`` on ``module``, its state carried."""
    import torch

    with torch.no_grad():
        return [[o.clone() for o in _as_outputs(module(*args))] for args in steps]


def exported(name: str, sample: Any, inputs: tuple[Any, ...], make_inputs: Any) -> tuple[str, Any, Any]:
    """(form, module, exported program) of the first form (module docstring) whose program runs both
    sequences in eager PyTorch and exports; VendorError naming why neither does."""
    import torch

    if not inputs or not all(isinstance(x, torch.Tensor) and x.dim() > 0 for x in inputs):
        raise VendorError(
            f"sample model {name!r} has an input that is not a tensor with a dimension; the state checks "
            "make their program from the sample's tensor inputs"
        )
    why = []
    for form in (READ_BY_SAMPLE, OF_OUTPUTS):
        try:
            for seed, reverse in zip(SEEDS, (False, True)):
                steps = sequence(name, make_inputs, inputs, form, seed, reverse)
                run_eager(make_program(sample, inputs, form), steps)
            module = make_program(sample, inputs, form)
            step(f"torch.export.export of the stateful program of sample model {name!r} ({form})")
            first = sequence(name, make_inputs, inputs, form, SEEDS[0], reverse=False)[0]
            return form, module, torch.export.export(module, first)
        except VendorError:
            raise
        except Exception as exc:  # noqa: BLE001  (the sample, wrapped by the suite, does not run or export)
            why.append(f"{form}: {type(exc).__name__}: {exc}"[:1000])
    raise VendorError(
        f"no stateful program could be made of sample model {name!r} (its inputs stacked {STEPS} times along "
        f"dimension 0, or its first output kept in a buffer): {'; '.join(why)}"
    )


def placement(edge_program: Any, backend_id: str) -> dict[str, Any]:
    """Which operators of the lowered program run in a delegate of ``backend_id`` and which on CPU."""
    graph_module = edge_program.graph_module
    delegated: set[str] = set()
    cpu: set[str] = set()
    for node in operator_nodes(graph_module.graph):
        if "executorch_call_delegate" in str(node.target):
            lowered = getattr(graph_module, node.args[0].target)
            if lowered.backend_id == backend_id:
                delegated |= {operator_name(n.target) for n in operator_nodes(lowered.original_module.graph)}
            continue
        cpu.add(operator_name(node.target))
    return {"delegated": sorted(delegated), "cpu": sorted(cpu)}


def _found_partitioners(which: str) -> tuple[list[Any], str]:
    if which == "default":
        return partitioners("default"), "make_partitioners()"
    label = "mutable_state.make_partitioners()"
    made = vendor_call(label, descriptor().mutable_state.make_partitioners)
    try:
        return list(made), label
    except TypeError:
        raise VendorError(f"{label} returned {type(made).__name__}, not a sequence of partitioners") from None


def state_flow(which: str, name: str) -> dict[str, Any]:
    """Makes the stateful program of sample model ``name`` (module docstring), lowers it with the backend's
    partitioners (``which``: 'default', or 'mutable_state' for those the descriptor declares to claim the
    mutated buffer) and returns the program, the two sequences' inputs and the eager outputs to compare
    with (packed), and where its operators ran."""
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass

    step(f"making the stateful program of sample model {name!r} and its eager outputs")
    sample, inputs = made_sample(name)
    make_inputs = descriptor().sample(name).make_inputs
    form, module, program_export = exported(name, sample, inputs, make_inputs)
    first = sequence(name, make_inputs, inputs, form, SEEDS[0], reverse=False)
    second = sequence(name, make_inputs, inputs, form, SEEDS[1], reverse=True)

    def fresh() -> Any:
        return make_program(sample, inputs, form)

    carried = [run_eager(fresh(), first), run_eager(fresh(), second)]
    # What the defects give: each step on a program that forgot the earlier ones; both sequences fed,
    # interleaved, to one state; the first sequence run again on the state it left.
    dropped = [[run_eager(fresh(), [s])[0] for s in seq] for seq in (first, second)]
    one = fresh()
    shared: list[list[Any]] = [[], []]
    for a, b in zip(first, second):
        shared[0] += run_eager(one, [a])
        shared[1] += run_eager(one, [b])
    left = fresh()
    run_eager(left, first)
    continued = run_eager(left, first)

    found, label = _found_partitioners(which)
    edge = vendor_call(
        f"lowering the stateful program of sample model {name!r} with the backend's {label}",
        to_edge_transform_and_lower,
        program_export,
        partitioner=found,
    )
    placed = placement(edge.exported_program(), descriptor().backend_id)
    # Every new load starts from the buffers' initial values, stored in the program, not from whatever
    # memory holds.
    config = ExecutorchBackendConfig(passes=[InitializedMutableBufferPass(list(module.names))])
    program = vendor_call(f"to_executorch() of the stateful program of {name!r}", edge.to_executorch, config)
    return {
        "pte": bytes(program.buffer),
        "form": form,
        "sample": name,
        "steps": STEPS,
        "inputs": [[pack(list(args)) for args in seq] for seq in (first, second)],
        "expected": [[pack(outs) for outs in seq] for seq in carried],
        "dropped": [[pack(outs) for outs in seq] for seq in dropped],
        "shared": [[pack(outs) for outs in seq] for seq in shared],
        "continued": [pack(outs) for outs in continued],
        **placed,
    }
