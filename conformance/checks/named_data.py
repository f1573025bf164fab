"""Named-data checks: large constants kept out of the blob, in an external .ptd.

They apply to backends whose descriptor declares ``named_data``
(``conformance.descriptor.NamedDataSupport``); for the others they are not
applicable. The named-data sample is lowered with the declared partitioners,
and ExecuTorch writes the .pte and its .ptd file(s) into a scratch directory.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import flatbuffers
from flatbuffers.table import Table

from conformance import large_weights
from conformance.byte_sizes import byte_size
from conformance.comparison import assert_outputs_close
from conformance.context import Context, NamedDataLowered
from conformance.outcomes import CheckFailed, NotApplicable, SuiteCannotRun, ensure
from conformance.pte import read_pte
from conformance.registry import check, selects
from conformance.vendor.records import unpack
from conformance.vendor.task_registry import LARGE_WEIGHTS

PTD_FILE_IDENTIFIER = b"FT01"
PTD_HEADER_MAGIC = b"FH01"
#: NDATA-5's tolerance: each output sums 4096 products of float32 (a backend may order the sum its own way).
LARGE_WEIGHTS_RTOL = 1e-4
LARGE_WEIGHTS_ATOL = 1e-4
#: Bytes of NDATA-5's weights made and lowered within one per-check timeout: at 2^32 the task gets 4.25
#: timeouts (measured: 24 s of lowering and 50 s in all for the reference backend on 2 idle cores).
LARGE_WEIGHTS_BYTES_PER_TIMEOUT = 1 << 30
#: NDATA-5's program is made ahead (``start_large_weights``) from this many bytes of weights.
AHEAD_FROM_BYTES = 1 << 30
#: Bytes read first: the identifier and the fixed header.
_PTD_HEAD_BYTES = 64


# --------------------------------------------------------------------------- .ptd reading


def _vector(table: Table, slot: int) -> tuple[int, int]:
    """(start position, length) of a vector field of ``table``, or (0, 0) if absent."""
    off = table.Offset(4 + 2 * slot)
    return (table.Vector(off), table.VectorLen(off)) if off else (0, 0)


def _element(table: Table, start: int, i: int) -> Table:
    return Table(table.Bytes, table.Indirect(start + 4 * i))


def ptd_segments(path: Path) -> dict[str, tuple[int, int]]:
    """Key -> (offset in the file, size in bytes) of each named blob of a .ptd file.

    The .ptd is a FlatBuffer (``extension/flat_tensor/serialize/flat_tensor.fbs``:
    FlatTensor{version, segments, named_data}, DataSegment{offset, size},
    NamedData{key, segment_index, tensor_layout}); the ``flatbuffers`` runtime's
    Table reads it by field slot. Its fixed header after the identifier
    ("FH01", then u32 length, u64 flatbuffer size, u64 segment base offset,
    u64 segment data size) is outside the FlatBuffer, so ``struct`` reads it.
    Only what lies before the segments is read: a .ptd of gigabytes costs no memory.
    """
    try:
        with path.open("rb") as file:
            head = file.read(_PTD_HEAD_BYTES)
            if len(head) < 40 or head[4:8] != PTD_FILE_IDENTIFIER or head[8:12] != PTD_HEADER_MAGIC:
                raise CheckFailed(
                    f"{path.name} is not a .ptd file: identifier {head[4:8]!r}, header {head[8:12]!r} "
                    f"(expected {PTD_FILE_IDENTIFIER!r}, {PTD_HEADER_MAGIC!r})"
                )
            base = struct.unpack_from("<Q", head, 32)[0]
            file_size = path.stat().st_size
            file.seek(0)
            buf = file.read(min(base, file_size))
    except OSError as exc:
        raise CheckFailed(f"cannot read {path.name}: {exc.strerror or exc}") from None
    try:
        root = Table(buf, flatbuffers.encode.Get(flatbuffers.packer.uoffset, buf, 0))
        seg_start, seg_len = _vector(root, 1)
        named_start, named_len = _vector(root, 2)
        found = {}
        for i in range(named_len):
            entry = _element(root, named_start, i)
            key_off = entry.Offset(4)
            key = entry.String(key_off + entry.Pos).decode("utf-8", "replace") if key_off else ""
            index = entry.GetSlot(6, 0, flatbuffers.number_types.Uint32Flags)
            ensure(index < seg_len, f"{path.name}: named data {key!r} names segment {index} of {seg_len}")
            segment = _element(root, seg_start, index)
            offset = segment.GetSlot(4, 0, flatbuffers.number_types.Uint64Flags)
            size = segment.GetSlot(6, 0, flatbuffers.number_types.Uint64Flags)
            ensure(
                base + offset + size <= file_size,
                f"{path.name}: named data {key!r} [{base + offset}, +{size}) runs past the end ({file_size} bytes)",
            )
            found[key] = (base + offset, size)
        return found
    except (struct.error, IndexError, ValueError) as exc:
        raise CheckFailed(f"{path.name} is a malformed .ptd file: {exc}") from None


def ptd_index(path: Path) -> dict[str, int]:
    """Key -> size in bytes of each named blob of a .ptd file (``ptd_segments``)."""
    return {key: size for key, (_offset, size) in ptd_segments(path).items()}


def pte_index(pte: bytes) -> dict[str, int]:
    """Key -> size in bytes of each named blob inside the .pte."""
    program = read_pte(pte)
    return {n.key: program.segments[n.segment_index].size for n in program.named_data}


# --------------------------------------------------------------------------- helpers


def _lowered(ctx: Context) -> NamedDataLowered:
    ctx.require_named_data()
    return ctx.named_data_lowered()


def _blobs(ctx: Context, lowered: NamedDataLowered) -> list[bytes]:
    sample = ctx.require_named_data().sample
    blobs = [d.data for d in read_pte(lowered.pte).delegates() if d.backend_id == ctx.descriptor.backend_id]
    ensure(
        bool(blobs),
        f"named-data sample {sample!r} lowered with named_data.make_partitioners() has no "
        f"{ctx.descriptor.backend_id} delegate",
    )
    return blobs


def _one_data_file(ctx: Context, lowered: NamedDataLowered) -> Path:
    files = lowered.data_files
    sample = ctx.require_named_data().sample
    ensure(
        bool(files),
        f"named-data sample {sample!r}: lowering with named_data.make_partitioners() wrote no .ptd file; "
        "the declared compile specs must put the large constants into an external file",
    )
    ensure(
        len(files) == 1,
        f"named-data sample {sample!r} wrote {len(files)} .ptd files ({', '.join(files)}); the Python "
        "runtime of executorch 1.5 loads one data file per program, so the sample must write one",
    )
    return next(iter(files.values()))


def _require_data_path(ctx: Context) -> None:
    """NotApplicable unless the vendor process's executorch loads a program with a .ptd from Python (asked
    there: the process that judges imports no runtime, which takes seconds of a run's start)."""
    if not ctx.runtime_takes_data_path():
        raise NotApplicable(
            "this executorch's Python Runtime.load_program takes no data_path (added in 1.5.0), "
            "so no .ptd can be given from Python"
        )


# --------------------------------------------------------------------------- checks


@check(
    "NDATA-1",
    "C-NDATA-1",
    "the named data each blob needs is in the .pte or the .ptd written with it",
    applies_if="named_data",
)
def keys_present(ctx: Context) -> None:
    lowered = _lowered(ctx)
    sample = ctx.require_named_data().sample
    blobs = _blobs(ctx, lowered)
    data_file = _one_data_file(ctx, lowered)
    in_pte = pte_index(lowered.pte)
    in_ptd = ptd_index(data_file)
    ensure(
        bool(in_ptd),
        f"named-data sample {sample!r}: {data_file.name} holds no named data",
    )
    if ctx.require_named_data().required_keys is None:
        return
    needed = 0
    for i, keys in enumerate(ctx.required_keys(list(blobs))):
        needed += len(keys)
        for key, file in keys:
            if file is None:
                ensure(
                    key in in_pte,
                    f"blob {i} of {sample!r} needs named data {key!r} inside the .pte, "
                    f"which lacks it (the .pte has {len(in_pte)} named blobs)",
                )
            else:
                ensure(
                    file in lowered.data_files,
                    f"blob {i} of {sample!r} needs named data {key!r} from "
                    f"{file!r}, but lowering wrote {sorted(lowered.data_files)}",
                )
                ensure(
                    key in in_ptd or key in in_pte,
                    f"blob {i} of {sample!r} needs named data {key!r} "
                    f"from {file!r}, which lacks it ({len(in_ptd)} keys)",
                )
    ensure(
        needed > 0,
        f"named-data sample {sample!r}: required_keys() says no blob needs named data, "
        f"yet {data_file.name} was written",
    )


@check(
    "NDATA-2",
    "C-NDATA-2",
    "with named data on, each delegate blob stays under the declared size",
    applies_if="named_data",
)
def blob_size_bounded(ctx: Context) -> None:
    lowered = _lowered(ctx)
    support = ctx.require_named_data()
    for i, blob in enumerate(_blobs(ctx, lowered)):
        ensure(
            len(blob) <= support.max_blob_bytes,
            f"blob {i} of named-data sample {support.sample!r} has {len(blob)} bytes, more than the declared "
            f"max_blob_bytes {support.max_blob_bytes}: the large constants are still inside the blob",
        )


@check(
    "NDATA-3",
    "C-NDATA-3",
    "the program loaded with its .ptd runs and matches eager PyTorch",
    applies_if="named_data",
)
def runs_with_data_file(ctx: Context) -> None:
    ctx.require_named_data()  # the capability first: an undeclared one is exempt, whatever else is missing
    _require_data_path(ctx)
    lowered = _lowered(ctx)
    data_file = _one_data_file(ctx, lowered)
    ctx.require_runtime()
    support = ctx.require_named_data()
    model = ctx.descriptor.sample(support.sample)
    sample = ctx.sample(support.sample)
    actual = ctx.execute(
        lowered.pte_path,
        sample.inputs,
        f"named-data sample {support.sample!r} with {data_file.name}",
        data_path=data_file,
    )
    assert_outputs_close(
        f"named-data sample {support.sample!r}", actual, sample.expected, model.rtol, model.atol
    )


@check(
    "NDATA-4",
    "C-NDATA-4",
    "without its .ptd the program fails to load, with a log line naming what is missing",
    applies_if="named_data",
)
def fails_without_data_file(ctx: Context) -> None:
    lowered = _lowered(ctx)
    data_file = _one_data_file(ctx, lowered)
    ctx.require_runtime()
    sample = ctx.require_named_data().sample
    inputs = ctx.sample(sample).inputs
    error, outputs, log_text = ctx.try_load(
        lowered.pte_path, f"named-data sample {sample!r} without {data_file.name}", inputs=inputs
    )
    ensure(
        error is not None,
        f"named-data sample {sample!r} loaded and ran without {data_file.name} and returned "
        f"{outputs or 0} outputs; a missing data file must be an error, never output",
    )
    names = {data_file.name, data_file.stem, *ptd_index(data_file)}
    ensure(
        any(name in log_text for name in names),
        f"loading {sample!r} without {data_file.name} failed ({error}), but no log line names the file or a "
        f"missing key; the log was: {log_text.strip()[-400:]!r}",
    )


def _large_weights_plan(ctx: Context) -> tuple[large_weights.Size, Path]:
    """The size of this run's NDATA-5 program and the directory it is written to, chosen once in a run (a
    program started ahead holds memory when the check runs); SuiteCannotRun if this machine cannot hold it
    in memory or on disk, NotApplicable without named data."""
    ctx.require_named_data()
    _require_data_path(ctx)
    return ctx.once(("large_weights", "plan"), lambda: _choose_plan(ctx))


def _choose_plan(ctx: Context) -> tuple[large_weights.Size, Path]:
    import shutil

    try:
        size = large_weights.choose(_memory_for_vendor(ctx.memory_bytes))
    except large_weights.SizeError as exc:
        raise SuiteCannotRun(f"NDATA-5 cannot run here: {exc}") from None
    free = shutil.disk_usage(ctx.scratch_dir()).free
    if free < size.total_bytes + (256 << 20):
        raise SuiteCannotRun(
            f"NDATA-5 writes a .ptd of {byte_size(size.total_bytes)} into {ctx.scratch_dir()}, where "
            f"{byte_size(free)} is free; point TMPDIR at a larger disk"
        )
    return size, ctx.scratch_dir() / "large_weights"


def _describe_program(size: large_weights.Size) -> str:
    return f"the large-weights program ({large_weights.LAYERS} linears, {byte_size(size.total_bytes)})"


def _lower_large_weights(ctx: Context, size: large_weights.Size, out: Path, start: bool = False) -> Any:
    """The LARGE_WEIGHTS task's result for ``size``, a shared artifact made with the full timeout scaled to
    the program's size (its time is the check's shared_s); ``start``: only start making it (``Context.ahead``)."""
    key = ("large_weights", size.boundary)
    args = (LARGE_WEIGHTS, size.boundary, str(out))
    what = f"lowering {_describe_program(size)} with named_data.make_partitioners()"
    scale = max(1.0, size.total_bytes / LARGE_WEIGHTS_BYTES_PER_TIMEOUT)
    if start:
        return ctx.ahead(key, *args, what=what, scale=scale, huge_pages=True)
    return ctx.shared(key, lambda: ctx.call(*args, what=what, scale=scale))


def start_large_weights(ctx: Context) -> None:
    """NDATA-5's work ahead: a program of ``AHEAD_FROM_BYTES`` or more is made and written while the checks
    before NDATA-5 run (a certifier's, of 4.25 GiB, took 24-40 s of a 90 s run). Nothing if the check could
    not run here: it says why itself."""
    try:
        size, out = _large_weights_plan(ctx)
    except (NotApplicable, SuiteCannotRun, CheckFailed):  # the vendor process failed to answer: the check too
        return
    if size.total_bytes >= AHEAD_FROM_BYTES:
        _lower_large_weights(ctx, size, out, start=True)


def makes_program_ahead(selection: Iterable[str] | None, memory_bytes: int | None) -> bool:
    """Whether a run of the checks ``selection`` (None: every check) with the memory limit ``memory_bytes``
    would make NDATA-5's program ahead, as far as can be known before the backend is described (not
    whether it declares named data): the check is selected and the program this machine can hold is of
    ``AHEAD_FROM_BYTES`` or more. ``executorch-conformance run`` then starts the vendor process that makes
    it while the backend is described (``Context.keep_warm``)."""
    if not selects(selection, "NDATA-5"):
        return False
    try:
        size = large_weights.choose(_memory_for_vendor(memory_bytes))
    except large_weights.SizeError:
        return False  # the check says why itself
    return size.total_bytes >= AHEAD_FROM_BYTES


@check(
    "NDATA-5",
    "C-NDATA-5",
    "named data past 4 GiB (2^32) loads, runs and matches eager PyTorch",
    applies_if="named_data",
    ahead=start_large_weights,
)
def runs_past_32_bit_offsets(ctx: Context) -> str:
    import shutil

    size, out = _large_weights_plan(ctx)
    try:
        return _judge_large_weights(ctx, size, out)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _memory_for_vendor(memory_bytes: int | None) -> int | None:
    """The bytes a vendor process may still use: the memory available on the machine, at most the run's
    limit ``memory_bytes`` (None: the default)."""
    from conformance.vendor.process import default_memory_limit

    available = None
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        available = None
    limit = memory_bytes if memory_bytes is not None else default_memory_limit()
    found = [n for n in (available, limit) if n is not None]
    return min(found) if found else None


def _judge_large_weights(ctx: Context, size: large_weights.Size, out: Path) -> str:
    where = _describe_program(size)
    flow = _lower_large_weights(ctx, size, out)
    if not flow["delegated"]:
        raise NotApplicable(
            f"named_data.make_partitioners() delegate none of the {large_weights.LAYERS} linears (aten::linear "
            f"without bias, float32) of {where}, so no named data of this backend crosses 2^32 here"
        )
    files = {name: Path(path) for name, path in flow["files"].items()}
    ensure(
        len(files) == 1,
        f"{where} lowered with named_data.make_partitioners() wrote {len(files)} .ptd files "
        f"({', '.join(files) or 'none'}); its weights must go to one external file",
    )
    (data_file,) = files.values()
    segments = ptd_segments(data_file)
    end = max((offset + n for offset, n in segments.values()), default=0)
    ensure(
        end > size.boundary,
        f"{data_file.name} of {where} ends its named data at byte {end}, not past {large_weights.show_boundary(size.boundary)}: "
        f"the {flow['delegated']} delegated linears' weights are not all in it",
    )
    ctx.require_runtime()
    actual = ctx.execute(Path(flow["pte"]), unpack(flow["inputs"]), where, data_path=data_file)
    expected = unpack(flow["expected"])
    ensure(
        len(actual) == len(expected),
        f"{where} returned {len(actual)} outputs; eager PyTorch returns {len(expected)}",
    )
    wrong = []
    for i, (got, want) in enumerate(zip(actual, expected)):
        try:
            assert_outputs_close(where, [got], [want], LARGE_WEIGHTS_RTOL, LARGE_WEIGHTS_ATOL, start=i)
        except CheckFailed as exc:
            wrong.append((i, str(exc)))
    past = sorted((offset, key) for key, (offset, _n) in segments.items() if offset >= size.boundary)
    if wrong:
        stored = _stored_at(data_file, segments, flow["prefixes"])
        placed = "; ".join(
            f"the weight of output {i} starts at byte {stored[i]:,}" for i, _ in wrong if i in stored
        )
        raise CheckFailed(
            f"{len(wrong)} of {len(expected)} outputs of {where} are wrong, read from {data_file.name} of {end:,} "
            f"bytes with {len(past)} named blob(s) starting past byte {size.boundary:,} "
            f"({large_weights.show_boundary(size.boundary)}){': ' + placed if placed else ''}. {wrong[0][1]}. A runtime that "
            "keeps an offset or a size of the named data in 32 bits reads other weights there"
        )
    crossed = (
        f"{data_file.name} of {byte_size(size.total_bytes)}, {len(past)} named blob(s) past "
        f"{large_weights.show_boundary(size.boundary)}"
    )
    if size.scaled:
        return f"scaled down ({size.scaled}): {crossed}; proves {size.proves()}"
    return f"{crossed}; proves {size.proves()}"


def _stored_at(
    data_file: Path, segments: dict[str, tuple[int, int]], prefixes: list[bytes]
) -> dict[int, int]:
    """Weight index -> the byte of ``data_file`` where it starts, for the weights stored as they are (their
    first bytes found at the start of a named blob); a backend that packs its weights otherwise gets none."""
    starts: dict[bytes, int] = {}
    with data_file.open("rb") as file:
        for offset, _n in segments.values():
            file.seek(offset)
            starts.setdefault(file.read(len(prefixes[0]) if prefixes else 0), offset)
    return {i: starts[p] for i, p in enumerate(prefixes) if p in starts}
