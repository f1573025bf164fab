"""What runs inside the vendor process (see ``conformance.vendor_process``).

Every call into the vendor's code happens here, never in the pytest process:
making the sample models and their eager outputs, the partitioners, export
and lowering, loading the runtime library, and every runtime load and
execute. A crash or a hang here takes down only this process; the suite sees
it as a result of the check that made the call.

Each task runs with file descriptors 1 and 2 sent to a log file of its own, so
that what the runtime logged survives a crash. Before each step the task
writes the step's description to a second file of its own (``STEPS_SUFFIX``),
which the vendor's output cannot reach, so that the parent can say in which
step a crash or hang happened. The descriptor itself is loaded here, by the
first task of each process: the process that judges never imports the
vendor's modules (``describe`` gives it the descriptor's data). Tensors cross the process
boundary as ``torch.save`` bytes, which keeps every dtype and needs no shared
memory.

Contract of every task: it returns plain data, or raises ``VendorError`` (a
one-line message naming what failed), whatever the vendor's code raised.
"""

from __future__ import annotations

import contextlib
import dataclasses
import faulthandler
import hashlib
import io
import multiprocessing
import os
import sys
import traceback
from pathlib import Path
from typing import Any, ClassVar

#: Where a task's step markers go: its log path with this suffix (see ``step``).
STEPS_SUFFIX = ".steps"
#: The pid of the process that runs a task goes to its log path with this suffix (the parent watches it).
PID_SUFFIX = ".pid"


class VendorError(Exception):
    """The vendor's code raised; the message names the step and the exception (picklable: one str)."""


@dataclasses.dataclass(frozen=True)
class PartitionRecord:
    """What one partitioner's ``partition()`` returned during real lowering,
    captured before ExecuTorch rewrites the graph."""

    partitioner: str
    #: tag -> (backend_id, ((key, value), ...)) from the DelegationSpecs
    tags: dict[str, tuple[str, tuple[tuple[str, bytes], ...]]]
    #: (node name, operator schema name, tag) for every tagged operator node
    tagged_ops: tuple[tuple[str, str, str], ...]
    #: (node name, target, tag) for tagged call_function nodes that are not operators (operator.getitem)
    tagged_non_ops: tuple[tuple[str, str, str], ...]
    #: tags found on nodes (placeholders included)
    node_tags: frozenset[str]


@dataclasses.dataclass(frozen=True)
class Lowering:
    """One export and lowering of a sample in the vendor process."""

    pte: bytes | None
    records: tuple[PartitionRecord, ...]
    #: backend id -> 'module.qualname' of every BackendDetails subclass named so in the vendor process
    backend_classes: dict[str, tuple[str, ...]]
    #: file name -> path of the .ptd files written (named-data lowering only)
    data_files: dict[str, str]
    error: str | None = None

    @property
    def pte_bytes(self) -> bytes:
        """The .pte; only a lowering without ``error`` has one."""
        if self.pte is None:
            raise ValueError(f"the lowering made no program: {self.error}")
        return self.pte


@dataclasses.dataclass(frozen=True)
class RuntimeLoad:
    """What loading the runtime library did to the backend registry of a fresh process."""

    registered_before: tuple[str, ...]
    registered_after: tuple[str, ...]
    libraries: tuple[str, ...]
    libraries_error: str | None
    #: the named libraries that are mapped into the process after load_runtime()
    mapped: tuple[str, ...]
    error: str | None
    available: bool | None
    #: the backends registered once ``executorch.runtime`` was imported, before the descriptor's module
    #: (ExecuTorch's own Python runtime registers those whose libraries its pybindings NEED); None where
    #: that was not observed (a target's runner)
    registered_at_import: tuple[str, ...] | None = None


# --------------------------------------------------------------------------- tensors across the boundary


def pack(tensors: Any) -> bytes:
    """``tensors`` (a tensor, or a list/tuple of them) as bytes."""
    import torch

    buffer = io.BytesIO()
    torch.save(tensors, buffer)
    return buffer.getvalue()


def unpack(data: bytes) -> Any:
    import torch

    return torch.load(io.BytesIO(data), weights_only=True)


# --------------------------------------------------------------------------- process state


class _State:
    spec: str | bytes = b""
    descriptor: Any = None
    descriptor_error: str | None = None
    descriptor_plain_error: str | None = None
    step_path: str | None = None
    samples: ClassVar[dict[str, tuple[Any, tuple[Any, ...]]]] = {}
    runtime: RuntimeLoad | None = None
    registered_at_import: tuple[str, ...] | None = None
    keep_alive: ClassVar[list[Any]] = []


_state = _State()


def initialize(spec: str | bytes, log_path: str, memory_limit: int | None = None) -> None:
    """The pool's initializer: sends stdout/stderr to ``log_path``, limits the process's data memory to
    ``memory_limit`` bytes (RLIMIT_DATA) and imports the suite's own heavy modules (torch, executorch). Never raises, and runs none of the vendor's code: the descriptor is
    loaded by the first task (``_load_descriptor``), under that task's timeout, so that an import that
    hangs, crashes or exits is that task's result."""
    _die_with_parent()
    _limit_memory(memory_limit)
    _restore_vendor_path()
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    # Python-level writes go to the descriptors themselves, so each task's redirection takes them too
    # (ExecuTorch's Python extension sends the C++ log through sys.stderr).
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True, errors="replace")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True, errors="replace")
    faulthandler.enable(file=2, all_threads=False)  # fd 2: the task's own log at the time of a crash
    _state.spec = spec
    with contextlib.suppress(Exception):  # what every descriptor imports; a failure shows at its import
        import executorch.exir
        import executorch.runtime
        import torch  # noqa: F401

        # Before any of the vendor's code: what ExecuTorch's own runtime registered at import (RT-1).
        registry = executorch.runtime.Runtime.get().backend_registry
        _state.registered_at_import = tuple(registry.registered_backend_names)


def _restore_vendor_path() -> None:
    """In a vendor process the isolated judge started (conformance/judge_environment.py): the import path
    the vendor's own interpreter computed (its PYTHONPATH, its .pth directories) instead of the judge's,
    which spawn handed down; the judge's entries stay after it, so the suite's modules are still found."""
    import json

    from conformance.vendor_launch import VENDOR_SYS_PATH

    carried = os.environ.pop(VENDOR_SYS_PATH, None)
    if carried is None:
        return
    with contextlib.suppress(ValueError, TypeError):
        vendor = [str(p) for p in json.loads(carried)]
        sys.path[:] = vendor + [p for p in sys.path if p not in vendor]


def _load_descriptor() -> None:
    """Loads the descriptor (an entry point name or 'module:attr', or a descriptor object pickled with
    cloudpickle) once per process; a failure is kept in ``_state``."""
    if _state.descriptor is not None or _state.descriptor_error is not None:
        return
    spec = _state.spec
    label = "the descriptor object" if isinstance(spec, bytes) else f"the descriptor {spec!r}"
    step(f"loading {label} (importing its module)")
    try:
        if isinstance(spec, bytes):
            import cloudpickle

            _state.descriptor = cloudpickle.loads(spec)
        else:
            from conformance.descriptor import load_descriptor

            _state.descriptor = load_descriptor(spec)
    except BaseException as exc:  # noqa: BLE001  (any failure of vendor code is a finding)
        from conformance.descriptor import DescriptorError

        _state.descriptor_plain_error = _plain(str(exc)) if isinstance(exc, DescriptorError) else None
        _state.descriptor_error = f"loading {label} in the vendor process failed: {_one_line(exc)}"


def _limit_memory(limit: int | None) -> None:
    """Allocations beyond ``limit`` bytes fail in this process (MemoryError, malloc returning NULL)."""
    if limit is None:
        return
    with contextlib.suppress(ImportError, OSError, ValueError):
        import resource

        _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))


def _die_with_parent() -> None:
    """On Linux, the kernel kills this process when the suite's process dies (even by SIGKILL), so a
    hanging vendor call never outlives the run. Elsewhere a no-op."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
        parent = multiprocessing.parent_process()
        if parent is not None and os.getppid() != parent.pid:
            os._exit(1)  # the suite's process died before the line above: nobody is left to answer


def run_task(name: str, log_path: str, *args: Any) -> bytes:
    """Runs task ``name`` with fds 1 and 2 sent to ``log_path`` and its step markers written to
    ``log_path + STEPS_SUFFIX`` (a file the vendor's output cannot reach or imitate); see the module
    contract. The result is returned pickled, for ``conformance.vendor_process.load_result``, which
    accepts only the suite's own types."""
    import pickle

    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    _state.step_path = log_path + STEPS_SUFFIX
    Path(log_path + PID_SUFFIX).write_text(str(os.getpid()))
    try:
        if name != "describe":
            _load_descriptor()
            if _state.descriptor_error:
                raise VendorError(_state.descriptor_error)
        return pickle.dumps(_task(name)(*args))
    except VendorError as exc:
        raise VendorError(_plain(exc.args[0] if exc.args else "")) from None
    except BaseException as exc:  # noqa: BLE001
        raise VendorError(_safe_one_line(exc)) from None
    finally:
        _state.step_path = None
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def _plain(text: Any) -> str:
    """``text`` as an exact ``str`` (never a subclass of the vendor's, which would cross the boundary)."""
    try:
        return str.__str__(text) if isinstance(text, str) else str.__str__(str(text))
    except BaseException:  # noqa: BLE001
        return "(a message that could not be turned into text)"


def _safe_one_line(exc: BaseException) -> str:
    try:
        return _plain(_one_line(exc))
    except BaseException:  # noqa: BLE001  the vendor's __str__ raised in turn
        return _plain(f"{type.__getattribute__(type(exc), '__name__')} (its message could not be read)")


def _task(name: str):
    """A task of this module by name, or 'package.module:function' for a task defined elsewhere (the
    function follows this module's contract and may use its public helpers)."""
    if ":" in name:
        import importlib

        module, _, function = name.partition(":")
        return getattr(importlib.import_module(module), function)
    return TASKS[name]


def descriptor() -> Any:
    """The descriptor of this process (for tasks defined in other modules)."""
    return _state.descriptor


def step(what: str) -> None:
    """Marks the start of a step in the task's step file (read by the parent after a crash or hang)."""
    if _state.step_path is None:
        return
    fd = os.open(_state.step_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, f"{what}\n".encode("utf-8", "replace"))
    finally:
        os.close(fd)


def _one_line(exc: BaseException) -> str:
    """'Type: message (at file:line)' with the innermost frame outside this module."""
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ").strip()
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.endswith("vendor_worker.py")
    ]
    if frames:
        text += f" (at {frames[-1].filename}:{frames[-1].lineno})"
    if isinstance(exc, ImportError):
        from conformance.import_hints import hint

        found = hint(exc)
        text += f": {found}" if found else ""
    return text


def vendor_call(what: str, fn, *args, **kwargs):
    """Calls the vendor's ``fn``; any exception becomes VendorError('<what> raised <Type>: <msg>')."""
    step(what)
    try:
        return fn(*args, **kwargs)
    except VendorError:
        raise
    except BaseException as exc:  # noqa: BLE001
        raise VendorError(f"{what} raised {_one_line(exc)}") from None


# --------------------------------------------------------------------------- samples and eager outputs


def made_sample(name: str) -> tuple[Any, tuple[Any, ...]]:
    """(module in eval mode, inputs) of a sample model, made once per process with torch.manual_seed(0)."""
    if name not in _state.samples:
        import torch

        torch.manual_seed(0)
        made = vendor_call(f"make() of sample model {name!r}", _state.descriptor.sample(name).make)
        try:
            module, inputs = made
            inputs = tuple(inputs)
        except (TypeError, ValueError):
            raise VendorError(
                f"make() of sample model {name!r} returned {type(made).__name__}, not (module, inputs)"
            ) from None
        vendor_call(f"eval() of sample model {name!r}", module.eval)
        _state.samples[name] = (module, inputs)
    return _state.samples[name]


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

    model = _state.descriptor.sample(name)
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
        made = vendor_call("named_data.make_partitioners()", _state.descriptor.named_data.make_partitioners)
        label = "named_data.make_partitioners()"
    else:
        made = vendor_call("make_partitioners()", _state.descriptor.make_partitioners)
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


def _op_name(target: Any) -> str | None:
    """The schema name of an operator target ('aten::add.Tensor'), None for other callables."""
    name = getattr(target, "name", None)
    if not callable(name):
        return None
    try:
        value = name()
    except TypeError:
        return None
    return value if isinstance(value, str) else None


def _record(partitioner: Any, result: Any) -> PartitionRecord:
    tags = {
        _plain(tag): (
            _plain(spec.backend_id),
            tuple((_plain(cs.key), bytes(cs.value)) for cs in spec.compile_specs),
        )
        for tag, spec in result.partition_tags.items()
    }
    graph = result.tagged_exported_program.graph
    ops, non_ops = [], []
    for n in graph.nodes:
        tag = n.meta.get("delegation_tag")
        if n.op != "call_function" or not tag:
            continue
        op = _op_name(n.target)
        if op is None:
            non_ops.append(
                (_plain(n.name), _plain(getattr(n.target, "__qualname__", str(n.target))), _plain(tag))
            )
        else:
            ops.append((_plain(n.name), _plain(op), _plain(tag)))
    node_tags = frozenset(
        _plain(n.meta["delegation_tag"]) for n in graph.nodes if n.meta.get("delegation_tag")
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
    if _state.runtime is not None:
        return _state.runtime
    from executorch.runtime import Runtime

    backend_id = _state.descriptor.backend_id
    registry = Runtime.get().backend_registry
    before = tuple(registry.registered_backend_names)
    error = None
    if _state.descriptor.load_runtime is None:
        error = "the descriptor declares no runtime for this host (load_runtime is None)"
    else:
        try:
            vendor_call("load_runtime()", _state.descriptor.load_runtime)
        except VendorError as exc:
            error = str(exc)
    after = tuple(registry.registered_backend_names)
    libraries: tuple[str, ...] = ()
    libraries_error = None
    try:
        listed = vendor_call("runtime_libraries()", _state.descriptor.runtime_libraries)
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
    _state.runtime = RuntimeLoad(
        before,
        after,
        libraries,
        libraries_error,
        tuple(p for p in libraries if os.path.realpath(p) in mapped),
        error,
        available,
        _state.registered_at_import,
    )
    return _state.runtime


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
    _state.keep_alive.append((pte, program))  # load_program(bytes) keeps no reference to the bytes
    return loaded


def free_programs(what: str) -> None:
    """Frees every Program this task loaded, and with them their Methods: the runtime's ``destroy`` runs
    for each delegate handle now, under the step ``destroy of <what>``, so that a crash or a hang
    there is blamed on it (not on the next task). The caller drops its own references first."""
    step(f"destroy of {what} (the loaded methods freed)")
    _state.keep_alive.clear()


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
        listed = vendor_call(label, getattr(_state.descriptor, which))
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


def ping() -> int:
    return os.getpid()


def describe() -> dict[str, Any]:
    """The descriptor as plain data (``conformance.remote_descriptor`` rebuilds it in the process that
    judges): {'error': the DescriptorError's message} or {'info': ...}, all of it JSON text."""
    import json

    _load_descriptor()
    if _state.descriptor_error:
        if _state.descriptor_plain_error is not None:
            return {"error": _state.descriptor_plain_error}
        raise VendorError(_state.descriptor_error)
    from conformance.descriptor import to_info

    step("reading the descriptor's fields")
    info = to_info(_state.descriptor, vendor_call)  # each field by its kind (conformance.descriptor_fields)
    try:  # JSON text: only str, numbers, bools and None reach the parent, never the vendor's own types
        return {"info": _plain(json.dumps(info, allow_nan=False))}
    except (TypeError, ValueError) as exc:
        raise VendorError(f"the descriptor holds a value that is not plain data: {_one_line(exc)}") from None


def required_keys(blobs: list[bytes]) -> list[list[tuple[str, str | None]]]:
    """named_data.required_keys(blob) for each blob, as plain (key, file or None) pairs."""
    found = []
    for i, blob in enumerate(blobs):
        keys = vendor_call(
            f"named_data.required_keys(blob {i})", _state.descriptor.named_data.required_keys, blob
        )
        try:
            pairs = [(k, f) for k, f in keys]
        except (TypeError, ValueError):
            raise VendorError(
                f"named_data.required_keys(blob {i}) returned {type(keys).__name__}, not (key, file) pairs"
            ) from None
        found.append([(_plain(k), None if f is None else _plain(f)) for k, f in pairs])
    return found


TASKS = {
    f.__name__: f
    for f in (
        ping,
        describe,
        required_keys,
        sample,
        fresh_cases,
        describe_partitioners,
        lower,
        load_runtime,
        try_load,
        execute,
        execute_repeatedly,
        runtime_libraries,
        executorch_version,
    )
}
