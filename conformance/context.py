"""Shared state of one suite run: the descriptor, the vendor process, and every
result obtained from the vendor's code, computed once (``Memo``) so that the
checks that need the same artifact share it.

Every call into the vendor's code goes through ``Context.call`` and so runs in
the vendor process under the timeout: a check waits at most ``timeout``
seconds for its own calls; shared artifacts (a sample's lowering, the runtime
load) get the full timeout each and do not count against the check that
happened to need them first.

The lowering tasks go through the run's lowering cache (``conformance.vendor.lowering_cache``) when
the run has one: a hit stands for the lowering, counted in the report as a cached lowering. A certify
run only writes it; ``lower_fresh`` and ``lower_in_new_process`` (AOT-5) always lower.

A shared artifact that takes long to make (NDATA-5's program of gigabytes) can be started ``ahead``, when
the run begins, in a vendor process of its own: the checks before it run meanwhile, and ``shared`` waits
for it. Its failure, crash or timeout is the artifact's, met by the check that asks for it, as if made then.

With a target (``--target``), the runtime tasks (load, execute) go instead to
the conformance runner there (``conformance.targets.runtime``), under the same
timeouts, with the same results and faults.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import itertools
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.descriptor import CAPABILITY_ABSENT, BackendDescriptor, NamedDataSupport
from conformance.outcomes import CheckFailed, NotApplicable, TargetUnavailable, VendorCrashed, VendorTimedOut
from conformance.pte import Delegate, PteProgram, read_pte
from conformance.targets.runtime import TargetRuntime
from conformance.vendor import lowering_cache, step_times
from conformance.vendor import task_registry as tasks
from conformance.vendor.lowering_cache import LoweringCache
from conformance.vendor.process import VendorProcess, quote_log
from conformance.vendor.records import Lowering, PartitionRecord, RuntimeLoad, pack, unpack

__all__ = ["Context", "Lowering", "Memo", "NamedDataLowered", "PartitionRecord", "RuntimeLoad", "Sample"]

#: The default per-check timeout in seconds (ExecuTorch's own backend suite uses 120 s per operator test).
DEFAULT_TIMEOUT_S = 120.0
#: The longest timeout accepted: a day (longer waits overflow the clocks that pebble and threading use).
MAX_TIMEOUT_S = 86400.0


class Memo:
    """Computes each key once. A result is kept; so is a CheckFailed (and its subclasses: a crash, a
    timeout), raised again for every later request with a note of the check that first met it."""

    def __init__(self) -> None:
        self._done: dict[Any, tuple[bool, Any, str | None]] = {}

    def forget(self, key: Any) -> None:
        """Drops what was computed for ``key`` (the next request computes it again)."""
        self._done.pop(key, None)

    def has(self, key: Any) -> bool:
        """Whether ``key`` was computed (a result or a failure)."""
        return key in self._done

    def forget_prefix(self, prefix: tuple[Any, ...]) -> None:
        """Drops what was computed for every tuple key that starts with ``prefix``."""
        for key in [k for k in self._done if isinstance(k, tuple) and k[: len(prefix)] == prefix]:
            del self._done[key]

    def get(self, key: Any, compute: Callable[[], Any], current: str | None = None) -> Any:
        if key not in self._done:
            try:
                self._done[key] = (True, compute(), current)
            except CheckFailed as exc:
                self._done[key] = (False, exc, current)
        ok, value, first = self._done[key]
        if ok:
            return value
        note = f" (found while running {first})" if first and current and first != current else ""
        raise type(value)(f"{value}{note}")


@dataclasses.dataclass(frozen=True)
class Sample:
    """A sample model's inputs and eager PyTorch outputs, from the vendor process."""

    inputs: list[Any]
    expected: list[Any]
    digest: str


@dataclasses.dataclass(frozen=True)
class NamedDataLowered:
    """The named-data sample lowered with the named-data partitioners: the .pte
    and the .ptd files ExecuTorch wrote next to it (file name -> path)."""

    pte: bytes
    pte_path: Path
    data_files: dict[str, Path]
    records: tuple[PartitionRecord, ...]


class Context:
    """Lazily obtained results of the vendor's code for the checks of one run."""

    def __init__(
        self,
        descriptor: BackendDescriptor,
        spec: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        log_path: Path | None = None,
        target: str | None = None,
        runner: str | Path | None = None,
        vendor: VendorProcess | None = None,
        memory_bytes: int | None = None,
        lowering_cache: LoweringCache | None = None,
    ) -> None:
        """``spec`` names the descriptor for the vendor process ('module:attr' or an entry point name);
        without it the descriptor object itself is sent there (pickled with cloudpickle). ``log_path``
        receives what the vendor process prints outside the runtime calls (default: the scratch dir).
        With ``target`` (a --target URL) and ``runner`` (the runner executable built for the backend), the
        runtime tasks run there through the runner (``conformance.targets.runtime``); lowering and judging
        stay here. ``vendor``: a vendor process already started for ``spec`` (the one that described the
        backend), used instead of a new one. ``memory_bytes``: the most data memory each vendor process of
        the run may allocate (default: ``vendor_process.default_memory_limit()``). ``lowering_cache``: the
        cache the lowering tasks go through (None: every lowering is made)."""
        self.descriptor = descriptor
        if spec is None:
            import cloudpickle

            spec = cloudpickle.dumps(descriptor)
        self.spec = spec
        self.timeout = float(timeout)
        self.memory_bytes = memory_bytes
        self._scratch = tempfile.TemporaryDirectory(prefix="conformance-")
        self.vendor = vendor or self.new_vendor_process(self.scratch_dir(), log_path)
        self._memo = Memo()
        self.current_check: str | None = None
        self._deadline = float("inf")
        self._shared_depth = 0
        self._programs: dict[bytes, PteProgram] = {}
        #: the operators the OPS checks run (--et-ops), None for all declared
        self.operator_selection: frozenset[str] | None = None
        #: check id -> (key, value) pairs a check recorded for its test report (user_properties)
        self.properties: dict[str, list[tuple[str, str]]] = {}
        self.target: TargetRuntime | None = None
        self._target_recorded = False
        self._simulated_checks: set[str] = set()
        self._simulator_recorded = False
        self.lowering_cache = lowering_cache
        self._fingerprint: str | None = None
        self._fingerprint_lock = threading.Lock()
        #: key -> (the future of an artifact started ahead, its vendor process); see ``ahead``
        self._ahead: dict[Any, tuple[concurrent.futures.Future, VendorProcess]] = {}
        self._ahead_pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._ahead_count = itertools.count(1)  # names each one's scratch directory, never twice
        #: vendor processes started early for work ahead (``keep_warm``), by whether they have huge pages
        self._warm: dict[bool, VendorProcess] = {}
        if target is not None:
            self.use_target(target, runner)

    # ----------------------------------------------------------------- run bookkeeping

    def start_check(self, check_id: str) -> None:
        """Starts the clock of ``check_id``: its own vendor calls share ``timeout`` seconds."""
        self.current_check = check_id
        self._deadline = time.monotonic() + self.timeout

    def use_target(self, target: str | None, runner: str | Path | None = None) -> None:
        """Serves the runtime tasks from now on through the runner on ``target`` (None: the vendor process
        again), keeping every lowering; the runtime is loaded again where they now run."""
        from conformance.targets import open_transport

        if self.target is not None:
            self.target.close()
            self.target = None
        if target is not None:
            self.target = TargetRuntime(
                open_transport(target),
                Path(runner or ""),
                self.scratch_dir(),
                self.descriptor.backend_id,
                self._runtime_libraries,
            )
        self._target_recorded = False
        # What ran on the runtime runs again where the runtime now is: its load, and the operator cases'
        # outputs (the only runtime results kept; every lowering stays).
        self._memo.forget(("runtime",))
        self._memo.forget_prefix(("operators", "execute"))

    def record(self, key: str, value: str) -> None:
        """Adds a (key, value) to the test report of the check that runs now (see suite/test_contract.py)."""
        self.properties.setdefault(self.current_check or "", []).append((key, value))

    def close(self) -> None:
        self._close_ahead()
        self.vendor.close()
        if self.target is not None:
            self.target.close()
        self._scratch.cleanup()

    def new_vendor_process(
        self, scratch: Path, log_path: Path | None = None, huge_pages: bool = False
    ) -> VendorProcess:
        """A vendor process of its own for this run's descriptor (with the run's memory limit), logging in
        ``scratch``; the caller closes it. ``huge_pages``: see ``VendorProcess``."""
        return VendorProcess(self.spec, scratch, log_path, self.memory_bytes, huge_pages)

    def scratch_dir(self) -> Path:
        """A directory that lives as long as this context."""
        return Path(self._scratch.name)

    def call(
        self,
        task: str,
        *args: Any,
        what: str,
        with_log: bool = False,
        vendor: VendorProcess | None = None,
        fresh: bool = False,
        scale: float = 1.0,
    ) -> Any:
        """Runs the task called ``task`` (``conformance.vendor.task_registry``) for the check that runs now, bounded
        by what is left of its timeout; on a target if the target serves it. ``what`` names the call in
        messages; ``with_log``: (the result, what the task logged). ``vendor``: run it in that vendor process
        (a helper of the run) with the full timeout. A lowering task goes through the run's lowering cache
        unless ``fresh``. ``scale``: the call may take that many times its timeout (a program that much larger
        than the samples, such as NDATA-5's)."""
        if vendor is not None:
            timeout = self.timeout
        else:
            left = (
                max(1.0, self._deadline - time.monotonic())
                if self._deadline != float("inf")
                else self.timeout
            )
            timeout = min(self.timeout, left)
        timeout *= scale
        if self.target is not None and task in tasks.TARGET_TASKS:
            return self._on_target(task, args, what, timeout, with_log)
        if task in tasks.TARGET_TASKS:
            self._mark_simulated()
        process = vendor or self.vendor
        before = dict(process.step_seconds)
        try:
            if with_log:
                return process.call_with_log(task, *args, what=what, timeout=timeout)
            address = None if fresh else self._cache_address(task, args)
            if address is None:
                return process.call(task, *args, what=what, timeout=timeout)
            return self._through_cache(address, lambda: process.call(task, *args, what=what, timeout=timeout))
        finally:
            for kind, seconds in step_times.since(process.step_seconds, before).items():
                self.record(f"{kind}_s", f"{seconds:.6f}")

    def _cache_address(self, task: str, args: tuple) -> str | None:
        """The lowering cache's key of ``task(*args)``, None if the call does not go through the cache."""
        if self.lowering_cache is None or not lowering_cache.cacheable(task, args):
            return None
        with self._fingerprint_lock:
            if self._fingerprint is None and self.lowering_cache is not None:
                try:
                    found = self.vendor.call(
                        tasks.LOWERING_FINGERPRINT,
                        what="the lowering cache's fingerprint of the backend's packages",
                        timeout=self.timeout,
                    )
                    self._fingerprint = str(found["digest"])
                except (CheckFailed, KeyError, TypeError):
                    self.lowering_cache = None  # no fingerprint, no cache: every lowering is made
            fingerprint = self._fingerprint
        if fingerprint is None:
            return None
        return lowering_cache.key(fingerprint, self.spec, task, args)

    def _through_cache(self, address: str, run: Callable[[], Any]) -> Any:
        """The cached result at ``address``, else ``run()``'s, stored if it is a result or a vendor's error
        (never a crash or a timeout)."""
        cache = self.lowering_cache
        assert cache is not None  # _cache_address gave an address
        found = cache.get(address)
        if found is not None:
            self.record("cached_lowerings", "1")
            kind, value = found
            if kind == "error":
                raise CheckFailed(value)
            return value
        try:
            value = run()
        except (VendorCrashed, VendorTimedOut, TargetUnavailable):
            raise
        except CheckFailed as exc:
            if type(exc) is CheckFailed:
                cache.put_error(address, str(exc))
            raise
        cache.put_result(address, value)
        return value

    @property
    def cached_lowerings(self) -> int:
        """How many lowerings of this run came from the lowering cache."""
        return 0 if self.lowering_cache is None else self.lowering_cache.hits

    def _on_target(self, task: str, args: tuple, what: str, timeout: float, with_log: bool) -> Any:
        """A runtime task served by the runner on the target; the first one records what the target is."""
        target = self.target
        assert target is not None  # call only comes here with a target
        try:
            if with_log:
                return target.call_with_log(task, *args, what=what, timeout=timeout)
            return target.call(task, *args, what=what, timeout=timeout)
        finally:
            if target.info is not None and not self._target_recorded:
                import json

                self._target_recorded = True
                self.record("target", json.dumps(target.info, sort_keys=True))

    def _runtime_libraries(self) -> tuple[tuple[str, ...], str | None]:
        """The descriptor's runtime_libraries() from the vendor process, or the error it raised."""
        found = self.call(tasks.RUNTIME_LIBRARIES, what="runtime_libraries()")
        return tuple(found["libraries"]), found["error"]

    def shared(self, key: Any, compute: Callable[[], Any]) -> Any:
        """The artifact ``key`` of the run, computed once by ``compute`` (a failure is kept too), with the
        full timeout, its time not charged to the check that needed it first: the check that computes it
        records the time as ``shared_s`` (the report's ``results[].shared_s``), shown apart."""

        def timed(make: Callable[[], Any]) -> Any:
            started, deadline = time.monotonic(), self._deadline
            self._deadline = float("inf")
            self._shared_depth += 1
            try:
                return make()
            finally:
                self._shared_depth -= 1
                spent = time.monotonic() - started
                self._deadline = deadline + spent
                if self._shared_depth == 0:  # an artifact made inside another is counted once, in it
                    self.record("shared_s", f"{spent:.3f}")

        ahead = self._ahead.pop(key, None)
        make = compute if ahead is None else lambda: self._wait_ahead(ahead[0])
        return self._memo.get(key, lambda: timed(make), self.current_check)

    def once(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` the first time ``key`` is asked for (a CheckFailed too), its value afterwards: a choice
        the run makes once (untimed; use ``shared`` for an artifact of the vendor's code)."""
        return self._memo.get(key, compute, self.current_check)

    def ahead(
        self, key: Any, task: str, *args: Any, what: str, scale: float = 1.0, huge_pages: bool = False
    ) -> None:
        """Starts making the shared artifact ``key`` = the vendor task ``task(*args)`` now, in a vendor process
        of its own on a thread, with the full timeout times ``scale``; the ``shared`` request of ``key``
        then waits for it (its wait is the check's ``shared_s``) instead of computing it. No lowering cache:
        use it for artifacts the cache does not keep. A key already made or started is left as it is.
        ``huge_pages``: the process backs large allocations with huge pages (an artifact of gigabytes)."""
        if key in self._ahead or self._memo.has(key):
            return
        vendor = self._warm.pop(huge_pages, None)
        if vendor is None:
            scratch = self.scratch_dir() / f"ahead-{next(self._ahead_count)}"
            scratch.mkdir(exist_ok=True)
            vendor = self.new_vendor_process(scratch, huge_pages=huge_pages)
        if self._ahead_pool is None:
            self._ahead_pool = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="ahead")

        def make() -> tuple[Any, dict[str, float]]:
            try:
                return vendor.call(task, *args, what=what, timeout=self.timeout * scale), vendor.step_seconds
            finally:
                vendor.close()  # its memory is released before the check that reads the artifact runs

        self._ahead[key] = (self._ahead_pool.submit(make), vendor)

    def keep_warm(self, vendor: VendorProcess) -> None:
        """Takes ``vendor``, a process for this run's descriptor started before the run (``warm_up``, while
        the backend was described), for the first work ``ahead`` of its kind (``huge_pages`` or not), which
        then starts without waiting for a process to import torch and the descriptor. Closed with the
        Context if no work takes it."""
        stale = self._warm.pop(vendor.huge_pages, None)
        if stale is not None:
            stale.close()
        self._warm[vendor.huge_pages] = vendor

    def _wait_ahead(self, future: concurrent.futures.Future) -> Any:
        """The artifact ``future`` makes (see ``ahead``), its task's step times recorded for the check."""
        while True:  # in steps, so that Ctrl-C stops the wait at once
            try:
                value, steps = future.result(timeout=1.0)
            except concurrent.futures.TimeoutError:
                continue
            for kind, seconds in steps.items():
                self.record(f"{kind}_s", f"{seconds:.6f}")
            self.record("made_ahead", "1")
            return value

    def _close_ahead(self) -> None:
        """Stops what was started ahead and never asked for (killing its vendor process), and the processes
        kept warm for work that never came."""
        for _future, vendor in self._ahead.values():
            vendor.close()
        self._ahead.clear()
        for vendor in self._warm.values():
            vendor.close()
        self._warm.clear()
        if self._ahead_pool is not None:
            self._ahead_pool.shutdown(wait=True, cancel_futures=True)
            self._ahead_pool = None

    def forget(self, key: Any) -> None:
        """Drops the shared artifact ``key`` (the next ``shared`` request computes it again)."""
        self._memo.forget(key)

    # ----------------------------------------------------------------- declared capabilities

    def capability(self, name: str) -> Any:
        """The descriptor's support object of capability ``name`` (``composition``, ``quantized``, ...), or
        NotApplicable with the capability's absence reason (``CAPABILITY_ABSENT``) if it declares none."""
        support = getattr(self.descriptor, name)
        if support is None:
            raise NotApplicable(CAPABILITY_ABSENT[name])
        return support

    def capability_flow(self, name: str, task: str, what: str) -> Any:
        """What ``task`` returned for the sample of capability ``name`` (shared: computed once per run);
        ``what`` names the call, with ``{sample}`` standing for the sample's name."""
        sample = self.capability(name).sample
        return self.shared(
            ("capability_flow", name), lambda: self.call(task, sample, what=what.format(sample=repr(sample)))
        )

    # ----------------------------------------------------------------- samples

    @property
    def primary(self) -> str:
        """The name of the first sample model, used by single-program checks."""
        return self.descriptor.sample_models[0].name

    def delegated_samples(self) -> list[str]:
        return [m.name for m in self.descriptor.sample_models if m.delegated]

    def sample(self, name: str) -> Sample:
        """The sample's inputs and eager outputs (made in the vendor process with torch.manual_seed(0))."""

        def compute() -> Sample:
            data = self.call(tasks.SAMPLE, name, what=f"make() and eager forward of sample model {name!r}")
            return Sample(unpack(data["inputs"]), unpack(data["expected"]), data["digest"])

        return self.shared(("sample", name), compute)

    def fresh_cases(self, name: str, seed: int, count: int) -> list[tuple[list[Any], list[Any]]] | None:
        """``count`` fresh (inputs, eager outputs) from the sample's make_inputs, or None if it has none."""
        cases = self.call(
            tasks.FRESH_CASES, name, seed, count, what=f"make_inputs() of sample model {name!r}"
        )
        return None if cases is None else [(unpack(c["inputs"]), unpack(c["expected"])) for c in cases]

    # ----------------------------------------------------------------- lowering

    def partitioner_types(self, which: str = "default") -> list[tuple[str, bool]]:
        label = "make_partitioners()" if which == "default" else "named_data.make_partitioners()"
        return self.shared(
            ("partitioners", which), lambda: self.call(tasks.DESCRIBE_PARTITIONERS, which, what=label)
        )

    def _lower(
        self,
        name: str,
        which: str = "default",
        out_dir: Path | None = None,
        vendor: VendorProcess | None = None,
        fresh: bool = False,
    ) -> Lowering:
        digest = self.sample(name).digest
        args = (tasks.LOWER, name, which, str(out_dir) if out_dir else None, digest)
        what = f"export and lowering of sample model {name!r}"
        return self.call(*args, what=what, vendor=vendor, fresh=fresh)

    def lowering(self, name: str) -> Lowering:
        """The first lowering of ``name`` (memoized), successful or not."""
        return self.shared(("lowering", name), lambda: self._lower(name))

    def lowered(self, name: str) -> Lowering:
        """The lowering of ``name``; CheckFailed if it failed."""
        lowering = self.lowering(name)
        if lowering.error:
            raise CheckFailed(f"lowering sample model {name!r} failed: {lowering.error}")
        return lowering

    def partition_records(self, name: str) -> tuple[PartitionRecord, ...]:
        """What the partitioners claimed for ``name``, even if lowering then failed."""
        lowering = self.lowering(name)
        if lowering.error and not lowering.records:
            raise CheckFailed(
                f"lowering sample model {name!r} failed before any partitioner ran: {lowering.error}"
            )
        return lowering.records

    def lower_fresh(self, name: str) -> Lowering:
        """Exports and lowers ``name`` again in the vendor process (never from the lowering cache)."""
        lowering = self._lower(name, fresh=True)
        if lowering.error:
            raise CheckFailed(f"lowering sample model {name!r} again failed: {lowering.error}")
        return lowering

    def lower_in_new_process(self, name: str) -> Lowering:
        """Exports and lowers ``name`` in a process of its own, started for this (never from the lowering
        cache)."""
        scratch = self.scratch_dir() / f"fresh-{name}"
        scratch.mkdir(exist_ok=True)
        vendor = self.new_vendor_process(scratch)
        try:
            lowering = self._lower(name, vendor=vendor, fresh=True)
        finally:
            vendor.close()
        if lowering.error:
            raise CheckFailed(f"lowering sample model {name!r} in a new process failed: {lowering.error}")
        return lowering

    def pte(self, name: str) -> bytes:
        return self.lowered(name).pte_bytes

    def read(self, pte: bytes) -> PteProgram:
        if pte not in self._programs:
            self._programs[pte] = read_pte(pte)
        return self._programs[pte]

    def program(self, name: str) -> PteProgram:
        return self.read(self.pte(name))

    def backend_delegates(self, name: str) -> list[Delegate]:
        """The delegates of this backend in the .pte of ``name``."""
        return [d for d in self.program(name).delegates() if d.backend_id == self.descriptor.backend_id]

    # ----------------------------------------------------------------- named data

    def require_named_data(self) -> NamedDataSupport:
        """The descriptor's NamedDataSupport, or NotApplicable if it declares none."""
        return self.capability("named_data")

    def named_data_lowered(self) -> NamedDataLowered:
        """The named-data sample lowered once with the named-data partitioners, written as model.pte plus its
        .ptd files."""
        support = self.require_named_data()

        def compute() -> NamedDataLowered:
            out = self.scratch_dir() / "named_data"
            lowering = self._lower(support.sample, "named_data", out)
            if lowering.error:
                raise CheckFailed(
                    f"lowering sample model {support.sample!r} with named_data.make_partitioners() failed: "
                    f"{lowering.error}"
                )
            files = {n: Path(p) for n, p in lowering.data_files.items()}
            return NamedDataLowered(lowering.pte_bytes, out / "model.pte", files, lowering.records)

        return self.shared(("named_data",), compute)

    # ----------------------------------------------------------------- the runtime

    def runtime_load(self) -> RuntimeLoad:
        """What loading the runtime did in a fresh vendor process (the first load of the run)."""
        if self.descriptor.load_runtime is None and self.target is None and not self.simulated:
            raise NotApplicable("the descriptor declares no runtime for this host (load_runtime is None)")
        self._mark_simulated()
        load = self.shared(("runtime",), lambda: self.call(tasks.LOAD_RUNTIME, what="load_runtime()"))
        if load.simulator and not self._simulator_recorded:
            import json

            self._simulator_recorded = True
            self.record(
                "simulator",
                json.dumps({"backend_id": self.descriptor.backend_id, "simulator": load.simulator}),
            )
        return load

    @property
    def simulated(self) -> bool:
        """Whether the runtime checks run the backend's delegates in the vendor's simulator: the descriptor
        names one, no runtime for this host, and no --target (docs/contract.md, "Simulated runtimes")."""
        return (
            self.target is None
            and self.descriptor.load_runtime is None
            and self.descriptor.simulator is not None
        )

    def require_real_runtime(self, what: str) -> None:
        """NotApplicable in a simulated run, saying that ``what`` (of the backend's runtime library) stays
        unjudged there."""
        if self.simulated:
            raise NotApplicable(
                f"simulated: the backend's delegates run in its simulator, not in a runtime library of its own, "
                f'so {what} is not judged (docs/contract.md, "Simulated runtimes")'
            )

    def _mark_simulated(self) -> None:
        """In a simulated run, marks the check that runs now as having used the simulated runtime (its result's
        ``simulated``); ``runtime_load`` records the simulator itself (the report's ``simulator`` section)."""
        if not self.simulated:
            return
        check_id = self.current_check or ""
        if check_id not in self._simulated_checks:
            self._simulated_checks.add(check_id)
            self.record("simulated", "1")

    def require_runtime(self) -> RuntimeLoad:
        """The runtime load, or NotApplicable (no runtime declared) / CheckFailed (loading failed)."""
        load = self.runtime_load()
        if load.error:
            raise CheckFailed(f"loading the runtime failed: {load.error}")
        return load

    def execute(
        self, pte: bytes | Path, inputs: list[Any], what: str, data_path: Path | None = None
    ) -> list[Any]:
        """Loads ``pte`` with the standard runtime API and executes forward once; the outputs, or
        CheckFailed naming the step, the runtime's error and its log lines."""
        self.require_runtime()
        program = str(pte) if isinstance(pte, Path) else pte
        data = str(data_path) if data_path else None
        result, log = self.call(
            tasks.EXECUTE, program, data, what, pack(list(inputs)), what=f"execute of {what}", with_log=True
        )
        if "error" in result:
            raise CheckFailed(f"{result['step']} failed: {result['error']}{_logged(log)}")
        return unpack(result["outputs"])

    def try_load(
        self, pte: bytes | Path, what: str, data_path: Path | None = None, inputs: list[Any] | None = None
    ) -> tuple[str | None, int | None, str]:
        """(the error loading/executing raised or None, outputs returned, what the runtime logged)."""
        self.require_runtime()
        program = str(pte) if isinstance(pte, Path) else pte
        result, log = self.call(
            tasks.TRY_LOAD,
            program,
            str(data_path) if data_path else None,
            what,
            None if inputs is None else pack(list(inputs)),
            what=f"load of {what}",
            with_log=True,
        )
        return result["error"], result["outputs"], log

    def execute_repeatedly(
        self, programs: list[tuple[str, bytes]], rounds: list[dict[str, list[Any]]], copies: int
    ) -> dict[tuple[str, int, int], list[Any]]:
        """Outputs by (sample, copy, round); see core_tasks.execute_repeatedly."""
        self.require_runtime()
        packed = [{name: pack(list(inputs)) for name, inputs in r.items()} for r in rounds]
        result, log = self.call(
            tasks.EXECUTE_REPEATEDLY,
            programs,
            packed,
            copies,
            what="repeated execution of the samples",
            with_log=True,
        )
        if "error" in result:
            raise CheckFailed(f"{result['step']} failed: {result['error']}{_logged(log)}")
        return {key: unpack(value) for key, value in result["outputs"].items()}

    def required_keys(self, blobs: list[bytes]) -> list[list[tuple[str, str | None]]]:
        """named_data.required_keys(blob) of each blob, from the vendor process."""
        return self.call(tasks.REQUIRED_KEYS, blobs, what="named_data.required_keys()")

    def runtime_takes_data_path(self) -> bool:
        """Whether the vendor process's Python runtime loads a program with a .ptd (``data_path``)."""
        return self.once(
            ("runtime_takes_data_path",),
            lambda: self.call(tasks.RUNTIME_TAKES_DATA_PATH, what="Runtime.load_program's parameters"),
        )

    def executorch_version(self) -> str:
        """The executorch version of the vendor process (the exporter and the runtime)."""
        return self.shared(
            ("executorch_version",), lambda: self.call(tasks.EXECUTORCH_VERSION, what="version")
        )


def _logged(log: str) -> str:
    return quote_log([line for line in log.splitlines() if line.strip()])
