"""A structure-aware mutation fuzzer of whole .pte programs against the real
Python runtime (executorch.runtime with the reference backend registered).

    .venv/bin/python reference_backend/fuzz/pte_mutation_fuzzer.py --count 100000 [--seed 1] [--out DIR]

Seeds: the golden reference programs of every release (tests/golden/*/reference.pte,
header format 1) and programs exported now (header format 2: inline constants,
named data in the .pte, conv2d, the quantized sample quant_net). Each mutant
changes one seed in place:

- ``operator`` (the most frequent): an operator parameter of the blob's payload
  (operator_mutations.py: conv geometry, kernel sizes, channel counts, shapes,
  quantization words, parameter offsets and counts, operand ids), with the
  shapes repaired one time in two the way a forger gets past a runtime whose
  size arithmetic is unchecked, the checksum recomputed and, one time in two,
  the header's memory limit raised to 2 GiB (the forger controls it too);
- ``header``: a field of the contract blob header (fixed fields, extension
  records), checksum recomputed (or, 1 in 8, left stale);
- ``payload``: a u32 of the blob's payload (counts, value records, dims, op
  records, the named-data table) or a byte of it, checksum recomputed;
- ``flatbuffer``: a u32 or a byte of the .pte's flatbuffer (offsets, vector
  lengths, strings, segment offsets and sizes);
- ``bytes``: one to four random bytes anywhere.

Mutants are deterministic in (seed, index). This process imports the runtime
once, sets the runtime's compute maximum (--max-compute-steps, default 10^8:
an accepted mutant runs well under a second) and forks a runner that loads
(and, if it loads, executes) mutants one after another under RLIMIT_AS; a
mutant that takes longer than --time-bound seconds (default 30, far above
what the compute maximum allows, on a busy machine) is over the time bound:
the runner is killed and replaced by a fresh fork that continues after it,
as is a runner that dies by a signal. Counted failures: deaths (signals:
abort, segfault), runs over the time bound, and oversized allocations
(MemoryError, or the runtime's "out of memory" line: the address-space
limit stopped an allocation). Each failure is replayed: the mutant's
reference blobs are put into the unchanged seed and loaded in a fresh
process. If that fails too, the failure is the backend's (OUT/backend/,
exit code 1); otherwise it happened inside ExecuTorch and is recorded as
upstream (OUT/upstream/). Both keep a reproducer .pte; OUT/failures.json
lists them and OUT/summary.json has the counts (mutants, deaths, runs over
the time bound, wall time, outcomes, mutants per kind).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import select
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "reference_backend" / "tests"))  # payload_fields, models, forged_programs
sys.path.insert(0, str(HERE))

from operator_mutations import mutate_operator  # noqa: E402

from backend_kit.header import CHECKSUM_OFFSET, FIELDS, FIXED_LENGTH, checksum  # noqa: E402

BACKEND_ID = b"ReferenceBackend"
#: Interesting u32 values: boundaries, the 16384x16384 of issue 17, sign bits.
INTERESTING = (
    0,
    1,
    2,
    3,
    4,
    7,
    8,
    15,
    16,
    17,
    31,
    32,
    63,
    64,
    0x7F,
    0x80,
    0xFF,
    0x100,
    0x3FF,
    0x7FFF,
    0x8000,
    0xFFFF,
    0x10000,
    16384,
    1 << 20,
    (1 << 20) + 1,
    0x7FFFFFFF,
    0x80000000,
    0xFFFFFFFE,
    0xFFFFFFFF,
)
#: Lines of the runtime's log that mean an allocation was stopped by the address-space limit.
OOM_MARKERS = (b"out of memory", b"MemoryAllocationFailed", b"std::bad_alloc")


# --------------------------------------------------------------------------- seeds


def export_seeds(out: Path) -> None:
    """Writes the exported seeds (run in a child: exporting starts torch's thread pools)."""
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from forged_programs import conv_relu_pte, quant_conv_pte, quant_net_pte
    from models import cases

    import reference_backend

    out.mkdir(parents=True, exist_ok=True)
    for name, make in (
        ("conv_relu", conv_relu_pte),
        ("quant_conv", quant_conv_pte),
        ("quant_net", quant_net_pte),
    ):
        (out / f"{name}.pte").write_bytes(make())
    torch.manual_seed(0)
    specs = {"": [], "-named": reference_backend.named_data_specs(256)}
    for name, (model, example) in cases().items():
        for suffix, spec in specs.items():
            edge = to_edge_transform_and_lower(
                torch.export.export(model, example),
                partitioner=[reference_backend.ReferencePartitioner(spec)],
            )
            (out / f"{name}{suffix}.pte").write_bytes(edge.to_executorch().buffer)


class Seed:
    def __init__(self, name: str, pte: bytes) -> None:
        from backend_kit.header import decode
        from reference_backend.pte_blobs import delegate_blobs

        self.name = name
        self.pte = pte
        blobs = [b for b in delegate_blobs(pte) if b.backend_id == BACKEND_ID.decode()]
        self.blob = blobs[0].data
        self.blob_at = pte.index(self.blob)
        self.header = decode(self.blob)
        self.blobs = [b.data for b in blobs]


def load_seeds(out: Path) -> list[Seed]:
    seeds = [
        Seed(f"golden-{p.parent.name}", p.read_bytes())
        for p in sorted((REPO / "tests/golden").glob("*/reference.pte"))
    ]
    exported = out / "seeds"
    if not any(exported.glob("*.pte")):
        subprocess.run([sys.executable, __file__, "--export-seeds", str(exported)], check=True)
    seeds += [Seed(p.stem, p.read_bytes()) for p in sorted(exported.glob("*.pte"))]
    return seeds


# --------------------------------------------------------------------------- mutations


def _value(rng: random.Random, old: int, bits: int) -> int:
    mask = (1 << bits) - 1
    r = rng.random()
    if r < 0.5:
        return rng.choice(INTERESTING) & mask
    if r < 0.75:
        return (old + rng.choice((-1, 1, -8, 8, 16, 4096, -4096))) & mask
    if r < 0.85:
        return (old * 2) & mask
    return rng.getrandbits(bits)


def _put(buf: bytearray, at: int, size: int, rng: random.Random) -> None:
    fmt = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}[size]
    (old,) = struct.unpack_from(fmt, buf, at)
    struct.pack_into(fmt, buf, at, _value(rng, old, 8 * size))


def _refresh(blob: bytearray) -> None:
    if len(blob) < FIXED_LENGTH:
        return
    length = struct.unpack_from("<H", blob, FIELDS["header_length"][0])[0]
    if FIXED_LENGTH <= length <= len(blob):
        struct.pack_into("<I", blob, CHECKSUM_OFFSET, checksum(bytes(blob[:length]), bytes(blob[length:])))


HEADER_FIELDS = tuple(
    (at + k * struct.calcsize("<" + form[-1]), struct.calcsize("<" + form[-1]))
    for name, (at, form) in FIELDS.items()
    if name != "magic"
    for k in range(int(form[:-1] or 1))
)


#: Mutation kinds, in the order of their weights in mutate().
KINDS = ("operator", "header", "payload", "flatbuffer", "bytes")


def mutate(seed: Seed, rng: random.Random) -> tuple[bytes, str]:
    """One mutant of ``seed`` and a description of the change."""
    pte = bytearray(seed.pte)
    kind = rng.choices(KINDS, weights=(8, 2, 3, 2, 1))[0]
    blob = bytearray(seed.blob)
    h = seed.header
    if kind == "operator":
        payload = bytearray(blob[h.header_length :])
        what = mutate_operator(payload, h.blob_format[1], rng)
        if h.memory_limit is not None and rng.random() < 0.5:
            from forged_programs import with_forged_memory_limit

            blob = bytearray(with_forged_memory_limit(h, bytes(payload)))
            what += ", memory limit 2 GiB"
        else:
            blob[h.header_length :] = payload
            _refresh(blob)
        pte[seed.blob_at : seed.blob_at + len(blob)] = blob
        return bytes(pte), f"operator: {what}"
    if kind == "header":
        if h.backend_id_offset > FIXED_LENGTH and rng.random() < 0.4:  # format 2: the extension records
            at = FIXED_LENGTH + rng.randrange((h.backend_id_offset - FIXED_LENGTH) // 2) * 2
            size = 2 if rng.random() < 0.5 else min(4, h.backend_id_offset - at)
            size = 2 if size not in (2, 4) else size
        else:
            at, size = rng.choice(HEADER_FIELDS)
        _put(blob, at, size, rng)
        stale = at == CHECKSUM_OFFSET or rng.random() < 0.125
        if not stale:
            _refresh(blob)
        what = f"header u{8 * size} at {at}{' (stale checksum)' if stale else ''}"
    elif kind == "payload":
        payload_size = len(blob) - h.header_length
        records = min(payload_size, 32 + 48 * 64 + 512)
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            if rng.random() < 0.75 and records >= 4:
                at = h.header_length + rng.randrange(records // 4) * 4
                _put(blob, at, 4, rng)
            else:
                at = h.header_length + rng.randrange(payload_size)
                _put(blob, at, 1, rng)
        _refresh(blob)
        what = f"payload at {at - h.header_length} ({len(blob) - h.header_length}-byte payload)"
    if kind in ("header", "payload"):
        pte[seed.blob_at : seed.blob_at + len(blob)] = blob
        return bytes(pte), what
    if kind == "flatbuffer":
        end = seed.blob_at  # the flatbuffer comes before the segments
        if rng.random() < 0.7:
            at = rng.randrange(8, end // 4) * 4
            _put(pte, at, 4, rng)
        else:
            at = rng.randrange(8, end)
            _put(pte, at, 1, rng)
        return bytes(pte), f"flatbuffer at {at}"
    spots = []
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(pte))
        pte[at] = rng.getrandbits(8)
        spots.append(at)
    return bytes(pte), f"bytes at {spots}"


def mutant(seeds: list[Seed], seed: int, index: int) -> tuple[Seed, bytes, str]:
    rng = random.Random(seed * 1_000_003 + index)
    s = seeds[rng.randrange(len(seeds))]
    data, what = mutate(s, rng)
    return s, data, what


def attribute(s: Seed, data: bytes, out: Path, memory_limit: int) -> str:
    """ "backend" if the failure follows the mutant's reference blob, else "upstream".

    The mutant's blobs (as the .pte says) are put into the unchanged seed
    program and that is loaded in a fresh process: a failure there is the
    backend's. A mutant whose flatbuffer no longer names blobs of the seed's
    sizes is ExecuTorch's case (the backend's init on arbitrary bytes of any
    length is fuzzed by fuzz_backend_init)."""
    from reference_backend.pte_blobs import delegate_blobs

    try:
        blobs = [b.data for b in delegate_blobs(data) if b.backend_id == BACKEND_ID.decode()]
    except Exception:  # noqa: BLE001 - any damage of the flatbuffer
        return "upstream"
    if blobs == s.blobs or [len(b) for b in blobs] != [len(b) for b in s.blobs]:
        return "upstream"
    replayed = bytearray(s.pte)
    at = 0
    for old, new in zip(s.blobs, blobs):
        at = replayed.index(old, at)
        replayed[at : at + len(new)] = new
        at += len(new)
    # Replayed in a fork of this process (the runtime is loaded already).
    log = out / "replay.log"
    log.write_bytes(b"")
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open(log, os.O_WRONLY)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
            from executorch.runtime import Runtime

            try:
                Runtime.get().load_program(bytes(replayed)).load_method("forward")
            except MemoryError:
                os.write(1, b"std::bad_alloc")
            except Exception:  # noqa: BLE001, S110 - a refusal is the expected outcome
                pass
        finally:
            os._exit(0)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "backend"
        time.sleep(0.01)
    failed = (
        not os.WIFEXITED(status)
        or os.WEXITSTATUS(status) != 0
        or any(m in log.read_bytes() for m in OOM_MARKERS)
    )
    return "backend" if failed else "upstream"


# --------------------------------------------------------------------------- the runner (a fork)


def run_mutants(
    seeds: list[Seed], seed: int, start: int, count: int, progress: int, log_path: Path, memory_limit: int
) -> None:
    """In the forked runner: load (and run) mutants from ``start``; report each on ``progress``."""
    import torch
    from executorch.runtime import Runtime

    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(log_fd, 2)
    os.dup2(log_fd, 1)
    sys.stderr = open(2, "w", buffering=1, errors="backslashreplace", closefd=False)  # noqa: SIM115  for the process
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (memory_limit, hard))
    runtime = Runtime.get()
    for i in range(start, count):
        os.write(progress, f"S {i}\n".encode())
        _, data, what = mutant(seeds, seed, i)
        before = os.lseek(log_fd, 0, os.SEEK_END)
        outcome = "loaded"
        try:
            method = runtime.load_program(data).load_method("forward")
            meta = method.metadata
            shapes = [tuple(meta.input_tensor_meta(k).sizes()) for k in range(meta.num_inputs())]
            if all(torch.Size(sh).numel() <= 1 << 20 for sh in shapes):
                with contextlib.suppress(RuntimeError):
                    method.execute([torch.zeros(sh) for sh in shapes])
                    outcome = "ran"
        except RuntimeError:
            outcome = "refused"
        except MemoryError:
            outcome = "oom"
        except Exception as exc:  # noqa: BLE001 - e.g. UnicodeDecodeError of a name in ExecuTorch's wrapper
            outcome = f"python:{type(exc).__name__}"
        sys.stderr.flush()
        after = os.lseek(log_fd, 0, os.SEEK_END)
        if outcome != "oom" and after > before:
            with open(log_path, "rb") as f:
                f.seek(before)
                text = f.read(after - before)
            if any(m in text for m in OOM_MARKERS):
                outcome = "oom"
        os.write(progress, f"D {i} {outcome} {what.split()[0].rstrip(':')}\n".encode())
    os._exit(0)


# --------------------------------------------------------------------------- the zygote


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=2000, help="mutants to run (default 2000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=REPO / "build" / "pte-fuzz")
    ap.add_argument(
        "--time-bound",
        type=float,
        default=30.0,
        help="seconds one mutant may take to load and run (default 30); longer is a failure",
    )
    ap.add_argument(
        "--max-compute-steps",
        type=int,
        default=10**8,
        help="the runtime's compute maximum for the mutants (default 10^8)",
    )
    ap.add_argument(
        "--memory-limit-mib",
        type=int,
        default=0,
        help="RLIMIT_AS of the runner (default: its size at start plus 3072 MiB)",
    )
    ap.add_argument("--export-seeds", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.export_seeds:
        export_seeds(args.export_seeds)
        return 0

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    seeds = load_seeds(out)
    import reference_backend

    reference_backend.load_runtime()
    reference_backend.set_max_compute_steps(args.max_compute_steps)
    import executorch.runtime  # noqa: F401 - imported before forking, once

    vsz = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    memory_limit = (args.memory_limit_mib << 20) if args.memory_limit_mib else vsz + (3072 << 20)
    counts: dict[str, int] = {}
    kinds: dict[str, dict[str, int]] = {}  # mutation kind -> outcome -> mutants
    failures: list[dict] = []
    restarts = 0
    next_index = 0
    started = time.monotonic()
    log_path = out / "runner.log"
    log_path.write_bytes(b"")

    def record(index: int, failure: str) -> None:
        s, data, what = mutant(seeds, args.seed, index)
        where = attribute(s, data, out, memory_limit)
        folder = out / where
        folder.mkdir(exist_ok=True)
        path = folder / f"{failure}-{index}.pte"
        path.write_bytes(data)
        failures.append(
            {
                "index": index,
                "failure": failure,
                "where": where,
                "seed": s.name,
                "mutation": what,
                "reproducer": str(path),
            }
        )
        counts[f"{where}:{failure}"] = counts.get(f"{where}:{failure}", 0) + 1

    while next_index < args.count:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            try:
                run_mutants(seeds, args.seed, next_index, args.count, write_end, log_path, memory_limit)
            finally:
                os._exit(70)
        os.close(write_end)
        current = None
        buffer = b""
        last = time.monotonic()  # when the current mutant started, or the runner did
        hung = False
        while True:
            ready, _, _ = select.select([read_end], [], [], 0.5)
            if ready:
                chunk = os.read(read_end, 65536)
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    parts = line.decode().split()
                    if parts[0] == "S":
                        current = int(parts[1])
                        last = time.monotonic()
                    else:
                        outcome = parts[2]
                        per_kind = kinds.setdefault(parts[3], {})
                        per_kind[outcome] = per_kind.get(outcome, 0) + 1
                        counts[outcome.split(":")[0] if outcome.startswith("python:") else outcome] = (
                            counts.get(outcome.split(":")[0] if outcome.startswith("python:") else outcome, 0)
                            + 1
                        )
                        if outcome == "oom":
                            record(int(parts[1]), "oversized-allocation")
                        current = None
                        next_index = int(parts[1]) + 1
            if time.monotonic() - last > args.time_bound:
                hung = True
                os.kill(pid, signal.SIGKILL)
                break
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
        if current is not None:
            if hung:
                record(current, "over-time-bound")
            elif os.WIFSIGNALED(status):
                record(current, signal.Signals(os.WTERMSIG(status)).name)
            else:
                record(current, f"exit-{os.WEXITSTATUS(status)}")
            next_index = current + 1
            restarts += 1
        elif os.WIFSIGNALED(status) or (os.WIFEXITED(status) and os.WEXITSTATUS(status) != 0):
            if next_index >= args.count:
                break
            restarts += 1
        print(
            f"\r{next_index}/{args.count} mutants, {restarts} runner restarts",
            end="",
            file=sys.stderr,
            flush=True,
        )

    elapsed = time.monotonic() - started
    backend_failures = [f for f in failures if f["where"] == "backend"]
    summary = {
        "mutants": args.count,
        "seed": args.seed,
        "seconds": round(elapsed, 1),
        # Deaths by a signal and runs over the time bound, the backend's (the
        # failure follows the blob when replayed) and ExecuTorch's.
        "deaths": {
            where: sum(1 for f in failures if f["failure"].startswith("SIG") and f["where"] == where)
            for where in ("backend", "upstream")
        },
        "over_time_bound": {
            where: sum(1 for f in failures if f["failure"] == "over-time-bound" and f["where"] == where)
            for where in ("backend", "upstream")
        },
        "time_bound_seconds": args.time_bound,
        "max_compute_steps": args.max_compute_steps,
        "runner_restarts": restarts,
        "outcomes": dict(sorted(counts.items())),
        "outcomes_per_kind": {k: dict(sorted(v.items())) for k, v in sorted(kinds.items())},
        "backend_failures": len(backend_failures),
        "upstream_failures": len(failures) - len(backend_failures),
        "memory_limit_bytes": memory_limit,
        "seeds": [s.name for s in seeds],
    }
    (out / "failures.json").write_text(json.dumps(failures, indent=1) + "\n")
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(file=sys.stderr)
    print(json.dumps(summary, indent=1))
    return 1 if backend_failures else 0


if __name__ == "__main__":
    sys.exit(main())
