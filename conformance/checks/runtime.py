"""Runtime checks: registration, numerics, repeated use, refusing bad blobs.

Every load and execute runs in the vendor process (``Context.execute``,
``Context.try_load``): a runtime that crashes or hangs fails the check that
ran it, with the step and the runtime's last log lines.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from typing import Any

from packaging.version import Version

from conformance.comparison import assert_outputs_close
from conformance.context import Context, RuntimeLoad
from conformance.inspection.blob_header import HeaderError, read_header
from conformance.inspection.forge import rename_backend, replace_delegate_data, with_header_fields
from conformance.outcomes import CheckFailed, NotApplicable, SuiteCannotRun, ensure
from conformance.registry import check
from conformance.vendor.process import quote_log
from conformance.vendor.records import pack, unpack
from conformance.vendor.task_registry import (
    CONCURRENT_METHODS,
    INCOMPATIBLE_BLOBS,
    INPUTS_FLOW,
    MEMORY_GROWTH,
)
from conformance.version_numbers import names, names_in_range, names_release

#: Rounds of RT-4, each executing every method once.
ROUNDS = 3
#: Each sample is loaded this many times, all methods alive together.
COPIES = 2


def _registration_problem(ctx: Context, load: RuntimeLoad) -> str | None:
    """Why the registry does not show the backend registered the way its descriptor says, or None.

    ``registered_at_import``: ExecuTorch's own Python runtime registers the backend when
    ``executorch.runtime`` is imported (its pybindings NEED the library), before any vendor code;
    otherwise load_runtime() must be what registers it (C-RT-1)."""
    backend_id = ctx.descriptor.backend_id
    at_import = load.registered_at_import
    declared = ctx.descriptor.registered_at_import
    if declared:
        if at_import is not None and backend_id not in at_import:
            when = (
                "it was registered while the descriptor's module was imported"
                if backend_id in load.registered_before
                else "load_runtime() registered it: declare registered_at_import=False"
                if backend_id in load.registered_after
                else "it is not registered after load_runtime() either"
            )
            return (
                f"the descriptor declares registered_at_import, but importing executorch.runtime did not register "
                f"{backend_id!r} (registered then: {list(at_import)}); {when}"
            )
        if at_import is None and backend_id not in load.registered_after:
            return f"after load_runtime(), {backend_id!r} is not among the registered backends {list(load.registered_after)}"
        return None
    if at_import is not None and backend_id in at_import:
        return (
            f"{backend_id!r} was already registered before load_runtime() ran: ExecuTorch's own Python runtime "
            f"registers it when executorch.runtime is imported (registered then: {list(at_import)}); if that is "
            "how the backend ships, declare registered_at_import=True in the descriptor (C-RT-1)"
        )
    if backend_id in load.registered_before:
        return (
            f"{backend_id!r} was already registered before load_runtime() ran (registered: "
            f"{list(load.registered_before)}); the backend must be registered by the runtime library that "
            "load_runtime() loads, not by importing the descriptor or another library"
        )
    return None


@check("RT-1", "C-RT-1", "the runtime library registers under the backend id")
def registers(ctx: Context) -> str | None:
    ctx.require_real_runtime("which library registers the backend, and how")
    load = ctx.runtime_load()
    backend_id = ctx.descriptor.backend_id
    problem = _registration_problem(ctx, load)
    if problem:
        raise CheckFailed(problem)
    if load.error:
        raise CheckFailed(f"loading the runtime failed: {load.error}")
    ensure(
        backend_id in load.registered_after,
        f"after load_runtime(), {backend_id!r} is not among the registered backends {list(load.registered_after)}",
    )
    if load.libraries_error:
        raise CheckFailed(load.libraries_error)
    missing = [p for p in load.libraries if not os.path.exists(p)]
    ensure(not missing, f"runtime_libraries() names {', '.join(missing)}, which does not exist")
    unmapped = [p for p in load.libraries if p not in load.mapped]
    ensure(
        not unmapped,
        f"runtime_libraries() names {', '.join(unmapped)}, which is not loaded in the process after "
        "load_runtime(): the backend was registered by another library",
    )
    if not load.libraries:
        return (
            "the descriptor names no runtime library, so which library registered the backend is not checked"
        )
    if ctx.descriptor.registered_at_import:
        return (
            f"registered by ExecuTorch's Python runtime when executorch.runtime is imported (declared "
            f"registered_at_import), from {', '.join(os.path.basename(p) for p in load.libraries)}"
        )
    return None


@check("RT-2", "C-RT-2", "the registered backend reports is_available() true")
def is_available(ctx: Context) -> None:
    ctx.require_real_runtime("what the runtime library's is_available() says")
    load = ctx.runtime_load()
    backend_id = ctx.descriptor.backend_id
    if backend_id not in load.registered_after:
        raise CheckFailed(
            f"is_available() cannot be asked: {backend_id!r} is not registered after load_runtime() "
            f"(registered: {list(load.registered_after)})"
            + (f"; loading the runtime failed: {load.error}" if load.error else "")
        )
    ensure(load.available is not None, f"is_available() of {backend_id!r} was not asked (a suite bug)")
    ensure(bool(load.available), f"{backend_id}.is_available() is false")


@check("RT-3", "C-RT-3", "sample models match eager PyTorch within the declared tolerances")
def numerics(ctx: Context) -> None:
    ctx.require_runtime()
    for model in ctx.descriptor.sample_models:
        sample = ctx.sample(model.name)
        actual = ctx.execute(ctx.pte(model.name), sample.inputs, f"sample {model.name!r}")
        assert_outputs_close(f"sample {model.name!r}", actual, sample.expected, model.rtol, model.atol)


@check("RT-4", "C-RT-4", "methods load and execute repeatedly, several at once")
def repeated_and_concurrent_methods(ctx: Context) -> None:
    ctx.require_runtime()
    models = ctx.descriptor.sample_models
    rounds: list[dict[str, list]] = [{} for _ in range(ROUNDS)]
    expected: list[dict[str, list]] = [{} for _ in range(ROUNDS)]
    for model in models:
        sample = ctx.sample(model.name)
        fresh = ctx.fresh_cases(model.name, seed=1, count=ROUNDS) if model.make_inputs else None
        for r in range(ROUNDS):
            inputs, outputs = fresh[r] if fresh else (sample.inputs, sample.expected)
            rounds[r][model.name] = inputs
            expected[r][model.name] = outputs
    programs = [(m.name, ctx.pte(m.name)) for m in models]
    results = ctx.execute_repeatedly(programs, rounds, COPIES)
    for r in range(ROUNDS):
        for model in models:
            for copy in range(COPIES):
                assert_outputs_close(
                    f"round {r + 1}, copy {copy + 1} of sample {model.name!r}",
                    results[(model.name, copy, r)],
                    expected[r][model.name],
                    model.rtol,
                    model.atol,
                )


@dataclasses.dataclass(frozen=True)
class Forgery:
    """An incompatible blob made from a real one, and what the runtime's log line must name."""

    label: str
    blob: bytes
    #: the forged version, named as a whole token
    forged: str
    #: a version the runtime does read, named as a token or inside a range
    supported: str
    #: how the blob claims it, in words: its contract header, or the descriptor's hook
    claims: str = "whose header claims"


def forgeries(blob: bytes) -> list[Forgery]:
    """The incompatible rows of the verdict table (docs/blob-header.md), forged from ``blob``."""
    h = read_header(blob)
    major, minor = h.blob_format
    b0, b1, _ = h.backend_version
    written = f"{major}.{minor}"
    newer_writer_major = (b0 + 1, 0, 0)
    newer_writer_minor = (b0, b1 + 1, 0)
    return [
        Forgery(
            f"blob format {major + 1}.{minor} from a newer backend release",
            with_header_fields(blob, blob_format=(major + 1, minor), backend_version=newer_writer_major),
            f"{major + 1}.{minor}",
            written,
        ),
        Forgery(
            f"blob format {major}.{minor + 1} from a newer backend release",
            with_header_fields(blob, blob_format=(major, minor + 1), backend_version=newer_writer_minor),
            f"{major}.{minor + 1}",
            written,
        ),
        Forgery(
            f"blob format {major + 1}.0 claimed by this backend version (an altered blob)",
            with_header_fields(blob, blob_format=(major + 1, 0)),
            f"{major + 1}.0",
            written,
        ),
        Forgery(
            f"header format {h.header_format_version + 1}",
            with_header_fields(blob, header_format=h.header_format_version + 1),
            str(h.header_format_version + 1),
            str(h.header_format_version),
        ),
        Forgery(
            "header format 0", with_header_fields(blob, header_format=0), "0", str(h.header_format_version)
        ),
    ]


def incompatible_cases(ctx: Context, blob: bytes) -> list[Forgery]:
    """The incompatible blobs RT-5 loads: the descriptor's ``incompatible_blobs`` hook's, for a backend with a
    versioned format of its own, else the contract header's forgeries; CheckFailed saying what to declare
    when there is neither."""
    if ctx.descriptor.incompatible_blobs is not None:
        made = ctx.call(INCOMPATIBLE_BLOBS, bytes(blob), what="incompatible_blobs() of the descriptor")
        how = "that the descriptor's incompatible_blobs() made to claim"
        return [Forgery(c["label"], c["blob"], c["forged"], c["supported"], how) for c in made]
    try:
        return forgeries(blob)
    except HeaderError as exc:
        raise CheckFailed(
            f"cannot forge an incompatible blob: the blob has no contract header ({exc}), and the descriptor "
            "declares no incompatible_blobs hook to make one in the backend's own format; declare one "
            "(docs/contract.md, C-RT-5), or write the contract header"
        ) from None


def _token(line: str, text: str) -> bool:
    """Whether ``line`` names ``text`` as a whole token ('XN02' in "'XN02' != expected XN01")."""
    return re.search(rf"(?<![\w.]){re.escape(text)}(?![\w])", line) is not None


@check(
    "RT-5",
    "C-RT-5",
    "a blob claiming an incompatible version is refused with DelegateInvalidCompatibility and a log line",
)
def refuses_incompatible_blob(ctx: Context) -> None:
    ctx.require_runtime()
    name = ctx.primary
    delegates = ctx.backend_delegates(name)
    ensure(bool(delegates), f"sample {name!r} has no delegate to forge")
    cases = incompatible_cases(ctx, delegates[0].data)
    version = ctx.descriptor.version
    for case in cases:
        forged = replace_delegate_data(ctx.pte(name), delegates[0], case.blob)
        error, _, log_text = ctx.try_load(forged, f"sample {name!r} with a forged blob ({case.label})")
        if error is None:
            raise CheckFailed(
                f"the runtime loaded a blob {case.claims} {case.label}; it must refuse it with "
                "DelegateInvalidCompatibility (0x30)"
            )
        ensure(
            re.search(r"0x:?30\b", error) is not None,
            f"loading a blob with {case.label} failed with {error!r}, expected error 0x30 "
            "(DelegateInvalidCompatibility)",
        )
        lines = [
            line
            for line in log_text.splitlines()
            if (names(line, case.forged) or _token(line, case.forged))
            and (names_in_range(line, case.supported) or _token(line, case.supported))
            and names_release(line, version)
        ]
        ensure(
            bool(lines),
            f"refusing a blob with {case.label}, no log line names the forged version {case.forged}, a version "
            f"the runtime reads ({case.supported}) and the runtime's version {version}, each as a whole token; "
            f"the log was: {log_text.strip()[-400:]!r}",
        )


def foreign_ids(backend_id: str, load: RuntimeLoad) -> list[str]:
    """The ids other than ``backend_id`` that the vendor's code registered: those registered after
    ``executorch.runtime`` was imported (by the descriptor's module or by load_runtime()). What ExecuTorch's
    own import registers is ExecuTorch's, not the vendor's. On a target's runner that import is not observed
    (the runner's registry holds every library linked into it from its start), so nothing is judged there."""
    if load.registered_at_import is None:
        return []
    start = load.registered_at_import
    return [i for i in load.registered_after if i not in start and i != backend_id]


@check("RT-6", "C-RT-6", "a program whose backend is not registered fails with NotFound naming the backend")
def unregistered_backend(ctx: Context) -> None:
    ctx.require_runtime()
    backend_id = ctx.descriptor.backend_id
    extra = foreign_ids(backend_id, ctx.runtime_load())
    ensure(
        not extra,
        f"the backend's code registered {', '.join(repr(i) for i in extra)} besides {backend_id!r} (once "
        "executorch.runtime was imported): a "
        "program naming such an id, exported for another library, would reach this one instead of failing "
        "with NotFound; a library registers no id but its own",
    )
    missing = backend_id[:-1] + ("~" if backend_id[-1] != "~" else "!")
    try:
        renamed = rename_backend(ctx.pte(ctx.primary), backend_id, missing)
    except ValueError as exc:
        raise CheckFailed(f"cannot rename the backend in sample {ctx.primary!r}: {exc}") from None
    error, _, log_text = ctx.try_load(renamed, f"sample {ctx.primary!r} naming backend {missing!r}")
    if error is None:
        raise CheckFailed(f"a program naming the unregistered backend {missing!r} loaded anyway")
    ensure(re.search(r"0x:?20\b", error) is not None, f"expected error 0x20 (NotFound), got {error!r}")
    ensure(
        missing in log_text,
        f"the log does not name the missing backend {missing!r}: {log_text.strip()[-300:]!r}",
    )


@check("RT-8", "C-RT-10", "execute() leaves the input tensors it is handed as they were")
def inputs_untouched(ctx: Context) -> str:
    ctx.require_runtime()
    names = [m.name for m in ctx.descriptor.sample_models if m.delegated]
    if not names:
        raise NotApplicable("no sample model is declared delegated, so no delegate is handed a program input")
    flow = ctx.shared(
        "inputs_flow",
        lambda: ctx.call(INPUTS_FLOW, names, what="lowering the sample models returning their inputs"),
    )
    if flow["sample"] is None:
        raise NotApplicable(
            "in no delegated sample does a delegate read a program input, and the tensors a delegate is handed "
            f"in between are not observable: {'; '.join(flow['tried'])}"
        )
    name = flow["sample"]
    inputs = unpack(flow["inputs"])
    outputs = ctx.execute(flow["pte"], inputs, f"sample {name!r} returning its inputs")
    expected = unpack(flow["expected"])
    n = flow["sample_outputs"]
    ensure(
        len(outputs) == len(expected),
        f"sample {name!r} returning its inputs gave {len(outputs)} outputs, expected {len(expected)}",
    )
    for i in flow["read"]:
        written = _written(inputs[i], outputs[n + i])
        ensure(
            written is None,
            f"execute() wrote into input {i} of sample {name!r}, which a {ctx.descriptor.backend_id} delegate "
            f"reads: {written}; a CPU operator reading that input after the delegate computes with what the "
            "backend left there",
        )
    model = ctx.descriptor.sample(name)
    assert_outputs_close(
        f"sample {name!r} returning its inputs", outputs[:n], expected[:n], model.rtol, model.atol
    )
    read = ", ".join(str(i) for i in flow["read"])
    return (
        f"input(s) {read} of sample {name!r}, read by a delegate, were bit for bit the same after execute()"
    )


#: RT-9's phases: executes of one loaded method, and load-execute-free cycles of its program.
EXECUTES, CYCLES = 100, 10
#: Growth RT-9 allows per execute and per cycle, in either count: above an allocator's noise over the whole
#: phase (6.25 MiB over the executes, 2.5 MiB over the cycles), far below a buffer kept per call.
EXECUTE_GROWTH_LIMIT, CYCLE_GROWTH_LIMIT = 64 << 10, 256 << 10


@check("RT-9", "C-RT-11", "memory stays flat across executes and across load/destroy cycles")
def memory_stays_flat(ctx: Context) -> str:
    ctx.require_real_runtime("the runtime library's memory across executes and loads")
    ctx.require_runtime()
    if ctx.target is not None:
        raise NotApplicable(
            "the allocator and resident-memory counts are read in the vendor process; a target's runner "
            "reports none (run the check without --target)"
        )
    name = ctx.primary
    what = f"sample {name!r}"
    result, log = ctx.call(
        MEMORY_GROWTH,
        ctx.pte(name),
        pack(list(ctx.sample(name).inputs)),
        what,
        EXECUTES,
        CYCLES,
        what=f"executes and load cycles of {what}",
        with_log=True,
    )
    if "error" in result:
        lines = [line for line in log.splitlines() if line.strip()]
        raise CheckFailed(f"{result['step']} failed: {result['error']}{quote_log(lines)}")
    notes = []
    for phase, times, unit, limit in (
        ("executes", EXECUTES, "execute", EXECUTE_GROWTH_LIMIT),
        ("cycles", CYCLES, "load/destroy cycle", CYCLE_GROWTH_LIMIT),
    ):
        before, after = result[phase]
        for count, label in (("allocated", "allocated by the C allocator"), ("resident", "resident")):
            if before[count] is None or after[count] is None:
                continue
            grown = after[count] - before[count]
            ensure(
                grown <= limit * times,
                f"memory {label} grew by {_mib(grown)} over {times} {unit}s of {what}, {_kib(grown / times)} per "
                f"{unit} (allowed: {_kib(limit)} per {unit}): the runtime keeps what "
                + ("each execute allocates" if phase == "executes" else "init() allocates after destroy()"),
            )
        notes.append(
            f"{times} {unit}s: allocated {_signed(before['allocated'], after['allocated'])}, "
            f"resident {_signed(before['resident'], after['resident'])}"
        )
    return f"{what}: " + "; ".join(notes)


def _mib(n: float) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def _kib(n: float) -> str:
    return f"{n / (1 << 10):.1f} KiB"


def _signed(before: int | None, after: int | None) -> str:
    if before is None or after is None:
        return "not counted (no glibc mallinfo2)"
    grown = after - before
    return f"{'+' if grown >= 0 else '-'}{_kib(abs(grown))}"


def _written(given: Any, after: Any) -> str | None:
    """What changed between an input as given and as the program returned it, or None if nothing did."""
    import torch

    if tuple(after.shape) != tuple(given.shape) or after.dtype != given.dtype:
        return (
            f"it came back as {after.dtype} {tuple(after.shape)}, given as {given.dtype} {tuple(given.shape)}"
        )
    same = given == after
    if given.is_floating_point():
        same |= torch.isnan(given) & torch.isnan(after)
    changed = (~same).flatten().nonzero().flatten()
    if changed.numel() == 0:
        return None
    first = int(changed[0])
    return (
        f"{changed.numel()} of {given.numel()} elements changed, the first at flat index {first} "
        f"({given.flatten()[first].item()!r} became {after.flatten()[first].item()!r})"
    )


def format_forgeries(
    blob: bytes, header_formats: tuple[int, int], minors: tuple[int, int]
) -> list[tuple[int, tuple[int, int]]]:
    """(header format, blob format) pairs forged from ``blob`` for RT-7: every header format from 0 to one
    past the newest the rules or the blob name (with the blob's own blob format); every minor of the
    blob's major from 0 to one past the newest declared; minor 0 and the blob's minor of the majors
    either side (with the blob's own header format). The blob's own pair is left out."""
    h = read_header(blob)
    major, minor = h.blob_format
    own = h.header_format_version
    pairs = [(f, (major, minor)) for f in range(max(header_formats[1], own) + 2)]
    pairs += [(own, (major, m)) for m in range(max(minors[1], minor) + 2)]
    pairs += [(own, (other, m)) for other in (major - 1, major + 1) if other >= 0 for m in sorted({0, minor})]
    return [p for p in dict.fromkeys(pairs) if p != (own, (major, minor))]


@check(
    "RT-7",
    "C-RT-9",
    "the runtime accepts and refuses forged blob formats as its declared acceptance rules say",
    applies_if="acceptance",
)
def matches_acceptance_rules(ctx: Context) -> str:
    from conformance.compat.errors import CompatInputError
    from conformance.compat.rules import load_rules

    ctx.require_runtime()
    declared = ctx.capability("acceptance")
    try:
        rules = load_rules(declared.path)
    except CompatInputError as exc:
        raise CheckFailed(f"the acceptance rules cannot be read: {exc}") from None
    version = ctx.descriptor.version
    release = Version(version).base_version
    ensure(
        rules.backend_id == ctx.descriptor.backend_id,
        f"{rules.source} describes backend {rules.backend_id!r}, not {ctx.descriptor.backend_id!r}",
    )
    rule = rules.runtime(release)
    if rule is None:
        raise CheckFailed(
            f"{rules.source} declares runtimes {', '.join(rules.versions())}, not this runtime's version {version}"
        )
    executorch = ctx.executorch_version()
    state, why = rule.on_executorch(Version(executorch).base_version)
    ensure(
        state == "runs", f"runtime {release} is tested on executorch {executorch}, but {why} ({rules.source})"
    )
    name = ctx.primary
    delegates = ctx.backend_delegates(name)
    ensure(bool(delegates), f"sample {name!r} has no delegate to forge")
    try:
        pairs = format_forgeries(delegates[0].data, rule.header_formats, rule.blob_format_minors)
    except HeaderError as exc:
        raise CheckFailed(f"cannot forge blob formats: the blob has no contract header ({exc})") from None
    wrong = []
    for header_format, blob_format in pairs:
        forged = replace_delegate_data(
            ctx.pte(name), delegates[0], with_header_fields(delegates[0].data, header_format, blob_format)
        )
        label = f"header format {header_format}, blob format {blob_format[0]}.{blob_format[1]}"
        error, _, log_text = ctx.try_load(forged, f"sample {name!r} with a forged blob ({label})")
        refused = error is not None and re.search(r"0x:?30\b", error) is not None
        reads = rule.accepts_format(header_format, blob_format)
        if refused == reads:
            said = (log_text.strip().splitlines() or [""])[-1][:200]
            wrong.append(
                f"{label}: declared {'accepted' if reads else 'refused'}, but the runtime "
                + (
                    f"refused it with 0x30 ({said})"
                    if refused
                    else f"did not refuse it with 0x30 ({error or 'it loaded'})"
                )
            )
    if wrong:
        raise CheckFailed(
            f"runtime {release} does not behave as {rules.source} declares (header formats "
            f"{rule.header_formats[0]}-{rule.header_formats[1]}, blob formats {rule.formats()}): "
            + "; ".join(wrong[:4])
            + (f"; and {len(wrong) - 4} more of the {len(pairs)} forged formats" if len(wrong) > 4 else "")
        )
    return (
        f"{len(pairs)} forged formats of sample {name!r}, each accepted or refused (0x30) as runtime {release}'s "
        f"rules declare (header formats {rule.header_formats[0]}-{rule.header_formats[1]}, blob formats {rule.formats()})"
    )


#: RT-10: threads executing at once, and executes each; thread t runs input set t mod the number of sets.
THREADS, THREAD_EXECUTES = 8, 200


def _input_sets(ctx: Context) -> tuple[list[tuple[str, Any]], list[tuple[str, list, float, float]]]:
    """RT-10's input sets: (sample, packed inputs) and (sample, eager outputs, rtol, atol), each sample's own
    inputs, then fresh ones of the samples that make them, so that threads compute different things."""
    sets, expected = [], []
    for model in ctx.descriptor.sample_models:
        sample = ctx.sample(model.name)
        cases = [(sample.inputs, sample.expected)]
        if model.make_inputs:
            cases += ctx.fresh_cases(model.name, seed=2, count=2) or []
        for inputs, outputs in cases:
            sets.append((model.name, pack(list(inputs))))
            expected.append((model.name, list(outputs), model.rtol, model.atol))
    return sets, expected


@check("RT-10", "C-RT-12", "threads each executing their own method at once get the results each gets alone")
def concurrent_methods(ctx: Context) -> str:
    ctx.require_runtime()
    models = ctx.descriptor.sample_models
    programs = [(m.name, ctx.pte(m.name)) for m in models]
    sets, expected = _input_sets(ctx)
    beside = os.path.dirname(sys.executable)
    tools = [
        os.path.join(beside, t) if os.path.exists(os.path.join(beside, t)) else None
        for t in ("cmake", "ninja")
    ]
    result, log = ctx.call(
        CONCURRENT_METHODS,
        programs,
        sets,
        THREADS,
        THREAD_EXECUTES,
        *tools,
        what=f"{THREADS} threads executing the samples at once",
        with_log=True,
    )
    if "unavailable" in result:
        raise SuiteCannotRun(
            f"RT-10 runs the samples on threads of the conformance runner library, which cannot run here: "
            f"{result['unavailable']}"
        )
    if "error" in result and "unknown entry kind 'concurrent'" in result["error"]:
        raise SuiteCannotRun(
            "the runner on the target does not know RT-10's entry kind 'concurrent' (it was built before suite "
            "0.6.0): rebuild it from conformance/device_runner (docs/device-runner.md)"
        )
    if "error" in result:
        raise CheckFailed(f"{result['step']} failed: {result['error']}{quote_log(log.splitlines())}")
    wrong, total, first = 0, 0, None
    for thread, got in sorted(result["outputs"].items()):
        name = got["sample"]
        _, outputs, rtol, atol = expected[got["set"]]
        flat = unpack(got["outputs"])
        per = len(outputs)
        runs = len(flat) // per if per else 0
        ensure(
            runs == THREAD_EXECUTES and len(flat) == runs * per,
            f"thread {thread + 1} returned {len(flat)} outputs for {THREAD_EXECUTES} executes of sample {name!r} "
            f"with {per} outputs each",
        )
        for i in range(runs):
            total += 1
            try:
                assert_outputs_close(
                    f"execute {i + 1} of sample {name!r} on thread {thread + 1} (input set {got['set'] + 1})",
                    flat[i * per : (i + 1) * per],
                    outputs,
                    rtol,
                    atol,
                )
            except CheckFailed as exc:
                wrong += 1
                first = first or str(exc)
    ensure(
        wrong == 0,
        f"under concurrency, {wrong} of {total:,} executes ({THREADS} threads each executing its own method "
        f"{THREAD_EXECUTES} times at once) gave wrong outputs, which each gets alone: the first, {first}. "
        "Methods of different handles must not share mutable state (a static scratch buffer, a global "
        "context); guard what they share with a lock (C-RT-12)",
    )
    return (
        f"{THREADS} threads x {THREAD_EXECUTES} executes of {len(sets)} input sets of {len(programs)} samples"
    )
