"""The suite's own tasks of the vendor process (``conformance.vendor.task_registry``):
the sample models and their eager outputs, the partitioners and lowering, the
runtime load and executions, and the descriptor as plain data.

Each follows the contract of ``conformance.vendor.envelope``: it returns plain
data or the suite's records (``conformance.vendor.records``), or raises
``VendorError`` naming what failed. What a task makes once per process (the
sample models, the runtime load, the loaded programs) is held here.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, ClassVar

from backend_kit.aot import schema_name
from conformance.vendor.bootstrap import (
    descriptor,
    descriptor_failure,
    load_descriptor,
    registered_at_import,
)
from conformance.vendor.envelope import VendorError, one_line, plain, step, vendor_call
from conformance.vendor.records import Lowering, PartitionRecord, RuntimeLoad, pack, unpack
from conformance.vendor.sample_quantization import load_quantized_kernels


class _Held:
    """What the tasks of this process made and keep: samples by name (float and quantized), the runtime load, loaded programs."""

    samples: ClassVar[dict[str, tuple[Any, tuple[Any, ...]]]] = {}
    quantized_samples: ClassVar[dict[str, tuple[Any, tuple[Any, ...]]]] = {}
    runtime: RuntimeLoad | None = None
    keep_alive: ClassVar[list[Any]] = []


_held = _Held()


# --------------------------------------------------------------------------- samples and eager outputs


def float_sample(name: str) -> tuple[Any, tuple[Any, ...]]:
    """(module in eval mode, inputs) of a sample model as its ``make()`` returns it, made once per process with
    torch.manual_seed(0)."""
    if name not in _held.samples:
        import torch

        torch.manual_seed(0)
        made = vendor_call(f"make() of sample model {name!r}", descriptor().sample(name).make)
        try:
            module, inputs = made
            inputs = tuple(inputs)
        except (TypeError, ValueError):
            raise VendorError(
                f"make() of sample model {name!r} returned {type(made).__name__}, not (module, inputs)"
            ) from None
        vendor_call(f"eval() of sample model {name!r}", module.eval)
        _held.samples[name] = (module, inputs)
    return _held.samples[name]


def made_sample(name: str) -> tuple[Any, tuple[Any, ...]]:
    """(module, inputs) of a sample model as the checks lower it: its float module, or, for a backend that
    declares ``quantized.every_sample``, that module quantized with the declared quantizer
    (``conformance.vendor.sample_quantization``). Made once per process."""
    if not descriptor().quantizes_every_sample:
        return float_sample(name)
    if name not in _held.quantized_samples:
        from conformance.vendor.sample_quantization import as_the_backend_takes_it, calibration_batches

        module, inputs = float_sample(name)
        batches = calibration_batches(name, inputs)
        quantized = as_the_backend_takes_it(f"sample model {name!r}", module, batches)
        _held.quantized_samples[name] = (quantized.module, inputs)
    return _held.quantized_samples[name]


def _digest(module: Any) -> str:
    """A digest of the module's parameters and buffers (weights must not depend on the process)."""
    import torch

    digest = hashlib.sha256()
    for key, value in sorted(module.state_dict().items()):
        digest.update(key.encode())
        if isinstance(value, torch.Tensor):
            try:
                digest.update(
                    value.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
                )
                continue
            except (RuntimeError, TypeError):  # quantized or other exotic tensors
                pass
        digest.update(repr(value).encode())
    return digest.hexdigest()


def _eager(name: str, module: Any, inputs: tuple[Any, ...]) -> list[Any]:
    import torch

    with torch.no_grad():
        out = vendor_call(f"eager forward of sample model {name!r}", module, *inputs)
    return list(out) if isinstance(out, (tuple, list)) else [out]


def sample(name: str) -> dict[str, Any]:
    """The sample's inputs, eager outputs and weight digest."""
    module, inputs = made_sample(name)
    return {
        "inputs": pack(list(inputs)),
        "expected": pack(_eager(name, module, inputs)),
        "digest": _digest(module),
    }


def fresh_cases(name: str, seed: int, count: int) -> list[dict[str, bytes]] | None:
    """``count`` (inputs, eager outputs) from the sample's ``make_inputs``, or None if it declares none."""
    import torch

    model = descriptor().sample(name)
    if model.make_inputs is None:
        return None
    module, _ = made_sample(name)
    generator = torch.Generator().manual_seed(seed)
    cases = []
    for _i in range(count):
        inputs = tuple(vendor_call(f"make_inputs() of sample model {name!r}", model.make_inputs, generator))
        cases.append({"inputs": pack(list(inputs)), "expected": pack(_eager(name, module, inputs))})
    return cases


# --------------------------------------------------------------------------- partitioners and lowering


def partitioners(which: str) -> list[Any]:
    if which == "named_data":
        made = vendor_call("named_data.make_partitioners()", descriptor().named_data.make_partitioners)
        label = "named_data.make_partitioners()"
    else:
        made = vendor_call("make_partitioners()", descriptor().make_partitioners)
        label = "make_partitioners()"
    try:
        found = list(made)
    except TypeError:
        raise VendorError(f"{label} returned {type(made).__name__}, not a sequence of partitioners") from None
    if not found:
        raise VendorError(f"{label} returned no partitioner")
    return found


def describe_partitioners(which: str) -> list[tuple[str, bool]]:
    """('module.qualname', is an executorch Partitioner) for each partitioner."""
    from executorch.exir.backend.partitioner import Partitioner

    return [
        (f"{type(p).__module__}.{type(p).__qualname__}", isinstance(p, Partitioner))
        for p in partitioners(which)
    ]


def _record(partitioner: Any, result: Any) -> PartitionRecord:
    tags = {
        plain(tag): (
            plain(spec.backend_id),
            tuple((plain(cs.key), bytes(cs.value)) for cs in spec.compile_specs),
        )
        for tag, spec in result.partition_tags.items()
    }
    graph = result.tagged_exported_program.graph
    ops, non_ops = [], []
    for n in graph.nodes:
        tag = n.meta.get("delegation_tag")
        if n.op != "call_function" or not tag:
            continue
        op = schema_name(n.target)
        if op is None:
            non_ops.append(
                (plain(n.name), plain(getattr(n.target, "__qualname__", str(n.target))), plain(tag))
            )
        else:
            ops.append((plain(n.name), plain(op), plain(tag)))
    node_tags = frozenset(
        plain(n.meta["delegation_tag"]) for n in graph.nodes if n.meta.get("delegation_tag")
    )
    return PartitionRecord(
        f"{type(partitioner).__module__}.{type(partitioner).__qualname__}",
        tags,
        tuple(ops),
        tuple(non_ops),
        node_tags,
    )


def observe(partitioner: Any, records: list[PartitionRecord]) -> Any:
    """Records what ``partitioner.partition`` returns, keeping the vendor's own object (and so every
    other hook of it, such as transform_for_pre_decomposition): the method is shadowed on the instance."""
    original = partitioner.partition
    label = f"{type(partitioner).__qualname__}.partition()"

    def partition(exported_program):
        result = vendor_call(label, original, exported_program)
        records.append(_record(partitioner, result))
        return result

    try:
        partitioner.partition = partition
    except (AttributeError, TypeError):
        raise VendorError(
            f"cannot observe {type(partitioner).__qualname__}: its instances take no attributes (__slots__); "
            "give the partitioner a __dict__ so the suite can record what partition() returns"
        ) from None
    return partitioner


def _backend_classes(ids: set[str]) -> dict[str, tuple[str, ...]]:
    from executorch.exir.backend.backend_details import BackendDetails

    def subclasses(cls: type) -> list[type]:
        found: list[type] = []
        sub: type
        for sub in cls.__subclasses__():
            found += [sub, *subclasses(sub)]
        return found

    every = subclasses(BackendDetails)
    return {
        i: tuple(f"{c.__module__}.{c.__qualname__}" for c in every if c.__name__ == i) for i in sorted(ids)
    }


def lower(name: str, which: str, out_dir: str | None, digest: str | None) -> Lowering:
    """Exports sample ``name`` and lowers it with the vendor's partitioners (``which``: 'default' or
    'named_data'); with ``out_dir``, writes model.pte and the .ptd files there."""
    import torch
    from executorch.exir import to_edge_transform_and_lower

    module, inputs = made_sample(name)
    if digest is not None and _digest(module) != digest:
        raise VendorError(
            f"make() of sample model {name!r} gives other weights in another process under torch.manual_seed(0); "
            "sample models must be deterministic"
        )
    records: list[PartitionRecord] = []
    try:
        observed = [observe(p, records) for p in partitioners(which)]
        exported = vendor_call(
            f"torch.export.export of sample model {name!r}", torch.export.export, module, inputs
        )
        edge = vendor_call(
            f"lowering sample model {name!r} with the backend's partitioners",
            to_edge_transform_and_lower,
            exported,
            partitioner=observed,
        )
        program = vendor_call(f"to_executorch() of sample model {name!r}", edge.to_executorch)
        pte = bytes(program.buffer)
        files: dict[str, str] = {}
        if out_dir is not None:
            out = Path(out_dir)
            out.mkdir(parents=True, exist_ok=True)
            (out / "model.pte").write_bytes(pte)
            vendor_call(
                f"writing the .ptd files of sample model {name!r}",
                program.write_tensor_data_to_file,
                str(out),
            )
            files = {p.name: str(p) for p in sorted(out.glob("*.ptd"))}
    except VendorError as exc:
        ids = {spec[0] for r in records for spec in r.tags.values()}
        return Lowering(None, tuple(records), _backend_classes(ids), {}, error=str(exc))
    ids = {spec[0] for r in records for spec in r.tags.values()}
    return Lowering(pte, tuple(records), _backend_classes(ids), files)


# --------------------------------------------------------------------------- the runtime


def _mapped_files() -> set[str]:
    try:
        with open("/proc/self/maps") as maps:
            return {
                os.path.realpath(line.split(None, 5)[5].strip())
                for line in maps
                if len(line.split(None, 5)) == 6
            }
    except OSError:
        return set()


def load_runtime() -> RuntimeLoad:
    """Loads the runtime library once in this process and says what changed in the registry."""
    if _held.runtime is not None:
        return _held.runtime
    if descriptor().quantizes_every_sample:
        # Every program of such a backend is quantized, and the quantize/dequantize its partitioners leave on CPU
        # (at the program's boundary) need ExecuTorch's quantized kernels, whether this process lowered the
        # program (the quantizer may have loaded them) or the lowering cache gave it back.
        load_quantized_kernels()
    from executorch.runtime import Runtime

    backend_id = descriptor().backend_id
    registry = Runtime.get().backend_registry
    before = tuple(registry.registered_backend_names)
    error = None
    simulator = None
    if descriptor().load_runtime is None and descriptor().simulator is not None:
        simulator = named(descriptor().simulator)
        try:
            vendor_call(f"the simulator bridge of {simulator}", _simulate)
        except VendorError as exc:
            error = str(exc)
    elif descriptor().load_runtime is None:
        error = "the descriptor declares no runtime for this host (load_runtime is None)"
    else:
        try:
            vendor_call("load_runtime()", descriptor().load_runtime)
        except VendorError as exc:
            error = str(exc)
    after = tuple(registry.registered_backend_names)
    libraries: tuple[str, ...] = ()
    libraries_error = None
    try:
        listed = vendor_call("runtime_libraries()", descriptor().runtime_libraries)
        libraries = tuple(str(p) for p in listed)
    except VendorError as exc:
        libraries_error = str(exc)
    except TypeError:
        libraries_error = f"runtime_libraries() returned {type(listed).__name__}, not a sequence of paths"
    mapped = _mapped_files()
    available = None
    if backend_id in after:
        step(f"is_available() of {backend_id}")
        available = bool(registry.is_available(backend_id))
    _held.runtime = RuntimeLoad(
        before,
        after,
        libraries,
        libraries_error,
        tuple(p for p in libraries if os.path.realpath(p) in mapped),
        error,
        available,
        registered_at_import(),
        simulator,
    )
    return _held.runtime


def named(fn: Any) -> str:
    """'module:qualname' of a callable (its repr when it has neither)."""
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    return f"{module}:{name}" if module and name else repr(fn)


def _simulate() -> None:
    """Registers the backend id with the kit's simulator bridge, its delegates run by the descriptor's
    simulator (docs/contract.md, "Simulated runtimes")."""
    from backend_kit.simulator import register

    register(descriptor().backend_id, descriptor().simulator)


def require_runtime() -> None:
    load = load_runtime()
    if load.error:
        raise VendorError(f"loading the runtime failed: {load.error}")


def load_method(pte: bytes | str, data_path: str | None, what: str, method: str = "forward"):
    from executorch.runtime import Runtime

    kwargs = {"data_path": data_path} if data_path else {}
    step(f"load of {what}")
    program = Runtime.get().load_program(pte, **kwargs)
    loaded = program.load_method(method)
    _held.keep_alive.append((pte, program))  # load_program(bytes) keeps no reference to the bytes
    return loaded


def free_programs(what: str) -> None:
    """Frees every Program this task loaded, and with them their Methods: the runtime's ``destroy`` runs
    for each delegate handle now, under the step ``destroy of <what>``, so that a crash or a hang
    there is blamed on it (not on the next task). The caller drops its own references first."""
    step(f"destroy of {what} (the loaded methods freed)")
    _held.keep_alive.clear()


def try_load(pte: bytes | str, data_path: str | None, what: str, inputs: bytes | None) -> dict[str, Any]:
    """Loads (and with ``inputs``, executes) a program; returns the error the runtime raised, or None."""
    require_runtime()
    method: Any = None
    try:
        method = load_method(pte, data_path, what)
        if inputs is None:
            answer: dict[str, Any] = {"error": None, "outputs": None}
        else:
            step(f"execute of {what}")
            answer = {"error": None, "outputs": len(method.execute(unpack(inputs)))}
    except RuntimeError as exc:
        answer = {"error": str(exc), "outputs": None}
    method = None  # the last reference: free_programs frees the Method
    free_programs(what)
    return answer


def execute(pte: bytes | str, data_path: str | None, what: str, inputs: bytes) -> dict[str, Any]:
    """Loads and executes a program once: {'outputs': bytes} or {'error': the runtime's error, 'step': ...}."""
    require_runtime()
    try:
        method = load_method(pte, data_path, what)
    except RuntimeError as exc:
        free_programs(what)
        return {"error": str(exc), "step": f"load of {what}"}
    step(f"execute of {what}")
    try:
        outputs = method.execute(unpack(inputs))
    except RuntimeError as exc:
        del method
        free_programs(what)
        return {"error": str(exc), "step": f"execute of {what}"}
    answer = {"outputs": pack([o.clone() for o in outputs])}
    del method, outputs
    free_programs(what)
    return answer


def execute_repeatedly(
    programs: list[tuple[str, bytes]], rounds: list[dict[str, bytes]], copies: int
) -> dict:
    """Loads every program ``copies`` times, keeps all methods alive, and executes each method once per
    round with that round's inputs of its sample; returns the outputs by (sample, copy, round)."""
    require_runtime()
    methods: list[tuple[str, int, Any]] = []
    try:
        return _execute_each(programs, rounds, copies, methods)
    finally:
        methods.clear()
        free_programs(f"the {len(programs) * copies} methods loaded at once")


def _execute_each(
    programs: list[tuple[str, bytes]], rounds: list[dict[str, bytes]], copies: int, methods: list
) -> dict:
    for name, pte in programs:
        for copy in range(copies):
            what = f"sample {name!r} (copy {copy + 1} of {copies})"
            try:
                methods.append((name, copy, load_method(pte, None, what)))
            except RuntimeError as exc:
                return {"error": str(exc), "step": f"load of {what}"}
    outputs = {}
    for round_, inputs in enumerate(rounds):
        for name, copy, method in methods:
            what = f"execute of sample {name!r} (copy {copy + 1}, round {round_ + 1})"
            step(what)
            try:
                result = method.execute(unpack(inputs[name]))
            except RuntimeError as exc:
                return {"error": str(exc), "step": what}
            outputs[(name, copy, round_)] = pack([o.clone() for o in result])
    return {"outputs": outputs}


def runtime_libraries(which: str = "runtime_libraries") -> dict[str, Any]:
    """The descriptor's runtime_libraries() (or engine_libraries()) as strings, or the error it raised
    (for a target's RT-1)."""
    label = f"{which}()"
    try:
        listed = vendor_call(label, getattr(descriptor(), which))
        return {"libraries": [str(p) for p in listed], "error": None}
    except VendorError as exc:
        return {"libraries": [], "error": str(exc)}
    except TypeError:
        return {
            "libraries": [],
            "error": f"{label} returned something that is not a sequence of paths",
        }


def executorch_version() -> str:
    from executorch.version import __version__

    return __version__


def runtime_takes_data_path() -> bool:
    """Whether this executorch's Python ``Runtime.load_program`` loads a program with a .ptd (``data_path``,
    added in 1.5.0)."""
    import inspect

    from executorch.runtime import Runtime

    return "data_path" in inspect.signature(Runtime.load_program).parameters


def ping() -> int:
    return os.getpid()


def describe() -> dict[str, Any]:
    """The descriptor as plain data (``conformance.vendor.remote_descriptor`` rebuilds it in the process that
    judges): {'error': the DescriptorError's message} or {'info': ...}, all of it JSON text."""
    import json

    load_descriptor()
    error, plain_error = descriptor_failure()
    if error:
        if plain_error is not None:
            return {"error": plain_error}
        raise VendorError(error)
    from conformance.descriptor import to_info

    step("reading the descriptor's fields")
    info = to_info(descriptor(), vendor_call)  # each field by its kind (conformance.descriptor_fields)
    try:  # JSON text: only str, numbers, bools and None reach the parent, never the vendor's own types
        return {"info": plain(json.dumps(info, allow_nan=False))}
    except (TypeError, ValueError) as exc:
        raise VendorError(f"the descriptor holds a value that is not plain data: {one_line(exc)}") from None


def required_keys(blobs: list[bytes]) -> list[list[tuple[str, str | None]]]:
    """named_data.required_keys(blob) for each blob, as plain (key, file or None) pairs."""
    found = []
    for i, blob in enumerate(blobs):
        keys = vendor_call(f"named_data.required_keys(blob {i})", descriptor().named_data.required_keys, blob)
        try:
            pairs = [(k, f) for k, f in keys]
        except (TypeError, ValueError):
            raise VendorError(
                f"named_data.required_keys(blob {i}) returned {type(keys).__name__}, not (key, file) pairs"
            ) from None
        found.append([(plain(k), None if f is None else plain(f)) for k, f in pairs])
    return found
