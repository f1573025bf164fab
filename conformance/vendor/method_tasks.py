"""Vendor-process tasks of the method checks (``task_registry.METHOD_FLOW`` and ``RUN_METHODS``, judged by
``conformance.checks.methods``).

The two-method program is made from a sample model of the backend, as an LLM program carries ``prefill``
(a sequence) and ``decode`` (one token): both methods export the one sample module, so they use the same
parameter tensors, and both are lowered in one ``to_edge_transform_and_lower({...})`` call with the
backend's partitioners. Two forms, the first that the sample allows:

- ``prefill on the inputs, decode on their first row`` (preferred): ``prefill`` takes the sample's inputs,
  ``decode`` each input's first row along dimension 0 (needs a sample whose eager forward and export
  take dimension 0 of size 1, and inputs whose dimension 0 is larger than 1);
- ``both on the sample's shapes``: both methods take inputs of the sample's own shapes.

Each method runs ``ROUNDS`` rounds of its own inputs: the sample's ``make_inputs`` (seeded per method)
when it declares one, else its inputs with floating-point ones scaled by a positive factor per round.
``method_flow`` returns the program, its data files, the inputs and the eager outputs (packed), where each
method's operators ran and, when asked to measure, the sizes of a single-method program and of a
two-method program whose ``decode`` holds other weights. ``run_methods`` executes the program in the
runtime: each method loaded alone, then both loaded from one program and executed in turn.
"""

from __future__ import annotations

import contextlib
import copy
import tempfile
from pathlib import Path
from typing import Any

from conformance.vendor.bootstrap import descriptor
from conformance.vendor.core_tasks import made_sample, partitioners, require_runtime
from conformance.vendor.envelope import VendorError, step, vendor_call
from conformance.vendor.records import pack, unpack
from conformance.vendor.state_tasks import placement

PREFILL = "prefill"
DECODE = "decode"
METHODS = (PREFILL, DECODE)
#: Rounds of inputs of each method (both methods execute once per round, in turn).
ROUNDS = 2
#: The forms of the program, as the result's ``form`` names them (see the module docstring).
SEQUENCE_AND_ROW = "prefill on the sample's inputs, decode on their first row"
SAME_SHAPES = "both methods on inputs of the sample's shapes"
#: Seeds of the methods' inputs (used by make_inputs when the sample declares it).
SEEDS = {PREFILL: 1, DECODE: 2}


def _as_outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _shaped(xs: tuple[Any, ...], method: str, form: str) -> tuple[Any, ...]:
    """The inputs of ``method``: ``decode`` takes the first row of each input in the first form."""
    if method == DECODE and form == SEQUENCE_AND_ROW:
        return tuple(x[:1].clone() for x in xs)
    return xs


def method_inputs(
    name: str, make_inputs: Any, inputs: tuple[Any, ...], form: str
) -> dict[str, list[tuple[Any, ...]]]:
    """The call arguments of each round of each method (module docstring)."""
    import torch

    rounds: dict[str, list[tuple[Any, ...]]] = {}
    for index, method in enumerate(METHODS):
        generator = torch.Generator().manual_seed(SEEDS[method])
        rounds[method] = []
        for k in range(ROUNDS):
            if make_inputs is not None:
                xs = tuple(vendor_call(f"make_inputs() of sample model {name!r}", make_inputs, generator))
            else:
                factor = (k + 1 + ROUNDS * index) / (ROUNDS + 1)
                xs = tuple(x * factor if x.is_floating_point() else x.clone() for x in inputs)
            rounds[method].append(_shaped(xs, method, form))
    return rounds


def run_eager(module: Any, calls: list[tuple[Any, ...]]) -> list[list[Any]]:
    """The outputs of ``module`` for each call of ``calls``."""
    import torch

    with torch.no_grad():
        return [[o.clone() for o in _as_outputs(module(*args))] for args in calls]


def exported(
    name: str, sample: Any, inputs: tuple[Any, ...], make_inputs: Any
) -> tuple[str, dict[str, list[tuple[Any, ...]]], dict[str, Any]]:
    """(form, the rounds' inputs per method, the exported program per method) of the first form (module
    docstring) whose methods run in eager PyTorch and export; VendorError naming why neither does."""
    import torch

    if not inputs or not all(isinstance(x, torch.Tensor) and x.dim() > 0 for x in inputs):
        raise VendorError(
            f"sample model {name!r} has an input that is not a tensor with a dimension; the method checks "
            "make their program from the sample's tensor inputs"
        )
    forms = [SAME_SHAPES]
    if any(x.shape[0] > 1 for x in inputs):
        forms.insert(0, SEQUENCE_AND_ROW)
    why = []
    for form in forms:
        try:
            rounds = method_inputs(name, make_inputs, inputs, form)
            for method in METHODS:
                run_eager(sample, rounds[method])
            programs = {}
            for method in METHODS:
                step(f"torch.export.export of method {method!r} of sample model {name!r} ({form})")
                programs[method] = torch.export.export(sample, rounds[method][0])
            return form, rounds, programs
        except VendorError:
            raise
        except Exception as exc:  # noqa: BLE001  (the sample does not run or export in this form)
            why.append(f"{form}: {type(exc).__name__}: {exc}"[:1000])
    raise VendorError(
        f"no two-method program could be made of sample model {name!r} (decode on the first row of its "
        f"inputs, or both methods on its own shapes): {'; '.join(why)}"
    )


def _lowered(programs: dict[str, Any], which: str, what: str) -> tuple[Any, Any]:
    """(edge program, ExecuTorch program) of ``programs`` lowered in one call with ``which``'s partitioners."""
    from executorch.exir import to_edge_transform_and_lower

    label = "make_partitioners()" if which == "default" else f"{which}.make_partitioners()"
    edge = vendor_call(
        f"lowering {what} with the backend's {label}",
        to_edge_transform_and_lower,
        programs,
        partitioner=partitioners(which),
    )
    return edge, vendor_call(f"to_executorch() of {what}", edge.to_executorch)


def _written(program: Any, what: str) -> tuple[bytes, dict[str, bytes]]:
    """The .pte bytes of ``program`` and its data files (.ptd) by file name."""
    with tempfile.TemporaryDirectory(prefix="conformance-methods-") as out:
        step(f"writing the .ptd files of {what}")
        # executorch 1.5 asserts when the program has no external data: there is no file to write
        with contextlib.suppress(AssertionError):
            program.write_tensor_data_to_file(out)
        data = {p.name: p.read_bytes() for p in sorted(Path(out).glob("*.ptd"))}
    return bytes(program.buffer), data


def _size(pte: bytes, data: dict[str, bytes]) -> dict[str, int]:
    return {"pte": len(pte), "data": sum(len(b) for b in data.values())}


def with_other_weights(name: str, sample: Any) -> Any:
    """A copy of ``sample`` whose floating-point parameters are negated: as many weight bytes, other values."""
    import torch

    try:
        other = copy.deepcopy(sample)
    except Exception as exc:  # noqa: BLE001  (the vendor's module cannot be copied)
        raise VendorError(
            f"copy.deepcopy of sample model {name!r} failed ({type(exc).__name__}: {exc}); the weight-sharing "
            "measurement lowers a copy of it with other weights"
        ) from None
    with torch.no_grad():
        for parameter in other.parameters():
            if parameter.is_floating_point():
                parameter.neg_()
    return other


def parameter_bytes(module: Any) -> int:
    """Bytes of the module's parameters and buffers, each tensor counted once."""
    seen: set[int] = set()
    total = 0
    for tensor in list(module.parameters()) + list(module.buffers()):
        if id(tensor) not in seen:
            seen.add(id(tensor))
            total += tensor.numel() * tensor.element_size()
    return total


def method_flow(which: str, name: str, measure: bool) -> dict[str, Any]:
    """Makes the two-method program of sample model ``name`` (module docstring), lowers it in one call with
    the partitioners ``which`` names ('default' or 'named_data') and returns it (.pte and .ptd bytes), each
    method's inputs and eager outputs (packed) and where its operators ran. With ``measure``, also the sizes
    of the single-method program (``decode`` alone) and of the two-method program whose ``decode`` holds
    other weights, and the sample's parameter bytes."""
    import torch

    step(f"making the two-method program of sample model {name!r} and its eager outputs")
    sample, inputs = made_sample(name)
    make_inputs = descriptor().sample(name).make_inputs
    form, rounds, programs = exported(name, sample, inputs, make_inputs)
    expected = {m: run_eager(sample, rounds[m]) for m in METHODS}
    what = f"the two-method program ({', '.join(METHODS)}) of sample model {name!r}"
    edge, program = _lowered(programs, which, what)
    backend_id = descriptor().backend_id
    placed = {m: placement(edge.exported_program(m), backend_id) for m in METHODS}
    pte, data = _written(program, what)
    result: dict[str, Any] = {
        "pte": pte,
        "data": data,
        "form": form,
        "sample": name,
        "methods": list(METHODS),
        "rounds": ROUNDS,
        "inputs": {m: [pack(list(args)) for args in rounds[m]] for m in METHODS},
        "expected": {m: [pack(outs) for outs in expected[m]] for m in METHODS},
        "placement": placed,
    }
    if measure:
        single_what = f"the single-method program ({DECODE}) of sample model {name!r}"
        _, single = _lowered({DECODE: programs[DECODE]}, which, single_what)
        other = with_other_weights(name, sample)
        step(f"torch.export.export of method {DECODE!r} of a copy of {name!r} with other weights")
        apart_programs = {PREFILL: programs[PREFILL], DECODE: torch.export.export(other, rounds[DECODE][0])}
        apart_what = f"the two-method program of sample model {name!r} whose {DECODE} holds other weights"
        _, apart = _lowered(apart_programs, which, apart_what)
        result["sizes"] = {
            "shared": _size(pte, data),
            "single": _size(*_written(single, single_what)),
            "apart": _size(*_written(apart, apart_what)),
        }
        result["parameter_bytes"] = parameter_bytes(sample)
    return result


def _method_names(program: Any) -> list[str] | None:
    names = getattr(program, "method_names", None)
    try:
        return sorted(names) if names is not None else None
    except TypeError:
        return None


def run_methods(
    pte: bytes, data_path: str | None, what: str, inputs: dict[str, list[bytes]]
) -> dict[str, Any]:
    """Executes the methods of ``pte`` (with its data file ``data_path``): each method loaded alone from a
    program of its own, executed with its first round's inputs; then every method loaded from one program,
    all alive together, executed in turn for each round. Returns {'alone': {method: outputs},
    'together': {(method, round): outputs}} (packed), or {'error': ..., 'step': ...} naming the method."""
    from executorch.runtime import Runtime

    require_runtime()
    kwargs = {"data_path": data_path} if data_path else {}
    alone: dict[str, bytes] = {}
    for method in inputs:
        at = f"load of method {method!r} of {what} (loaded alone)"
        step(at)
        program: Any = None
        loaded: Any = None
        try:
            program = Runtime.get().load_program(pte, **kwargs)
            loaded = program.load_method(method)
            at = f"execute of method {method!r} of {what} (loaded alone)"
            step(at)
            alone[method] = pack([o.clone() for o in loaded.execute(unpack(inputs[method][0]))])
        except RuntimeError as exc:
            return {"error": str(exc), "step": at}
        finally:
            step(f"destroy of method {method!r} of {what} (loaded alone)")
            loaded = program = None
    together: dict[tuple[str, int], bytes] = {}
    at = f"load of {what} (one program for the methods {', '.join(inputs)})"
    step(at)
    held: dict[str, Any] = {}
    program = None
    try:
        program = Runtime.get().load_program(pte, **kwargs)
        names = _method_names(program)
        missing = [m for m in inputs if names is not None and m not in names]
        if missing:
            return {"error": f"the program has the methods {names}, not {missing}", "step": at}
        for method in inputs:
            at = f"load of method {method!r} of {what} (both methods loaded from one program)"
            step(at)
            held[method] = program.load_method(method)
        for k in range(max(len(v) for v in inputs.values())):
            for method, rounds in inputs.items():
                at = (
                    f"execute of method {method!r} of {what} (round {k + 1}, both methods loaded from one "
                    "program, executed in turn)"
                )
                step(at)
                outputs = held[method].execute(unpack(rounds[k]))
                together[(method, k)] = pack([o.clone() for o in outputs])
    except RuntimeError as exc:
        return {"error": str(exc), "step": at}
    finally:
        step(f"destroy of {what} (the methods loaded from one program freed)")
        held.clear()
        program = None
    return {"alone": alone, "together": together}
