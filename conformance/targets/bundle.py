"""The bundle a runner reads and the results it writes back (the format is
described in docs/device-runner.md and read by conformance/device_runner/manifest.cpp and
conformance/device_runner/tensors.cpp).

A bundle is a directory: ``manifest.txt`` (line-based: ``entry <id> <kind>``,
``what``, ``program``, ``data``, ``inputs``, ``copies``, ``threads``, ``iterations``, ``round``,
``share_arenas``, ``end``),
the programs (.pte), their .ptd files, and the inputs as tensor files. The
runner writes ``results/<id>.txt`` (``status ok|error``, ``step``, ``error``,
``outputs``, ``output``, ``seconds``, ``registered``, ``mapped`` lines) and the outputs as
tensor files. Tensor files: "ETCT", u32 count, then per tensor i32
ScalarType, u32 ndim, i64 sizes, u8 dim order, u64 nbytes and the bytes laid
out in that dim order (a channels-last input stays channels-last), all
little-endian.
"""

from __future__ import annotations

import dataclasses
import shutil
import struct
from pathlib import Path
from typing import Any

FORMAT = 1
MAGIC = b"ETCT"

#: torch dtype name -> ExecuTorch ScalarType (runtime/core/portable_type/scalar_type.h).
SCALAR_TYPES = {
    "uint8": 0,
    "int8": 1,
    "int16": 2,
    "int32": 3,
    "int64": 4,
    "float16": 5,
    "float32": 6,
    "float64": 7,
    "complex64": 9,
    "complex128": 10,
    "bool": 11,
    "bfloat16": 15,
    "uint16": 27,
    "uint32": 28,
    "uint64": 29,
}


class BundleError(ValueError):
    """Something cannot be put into a bundle or read from the results; the message says what."""


def encode_tensors(tensors: list[Any]) -> bytes:
    """``tensors`` (torch tensors) as a tensor file."""
    import torch

    parts = [MAGIC, struct.pack("<I", len(tensors))]
    for i, t in enumerate(tensors):
        if not isinstance(t, torch.Tensor):
            raise BundleError(f"input {i} is a {type(t).__name__}; the runner takes tensor inputs only")
        name = str(t.dtype).removeprefix("torch.")
        if name not in SCALAR_TYPES:
            raise BundleError(f"input {i} has dtype {name}, which the runner's tensor files do not carry")
        order = tuple(t.dim_order()) if t.dim() else ()
        laid_out = t.detach().cpu().permute(order).contiguous()
        data = laid_out.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        parts += [
            struct.pack("<iI", SCALAR_TYPES[name], t.dim()),
            struct.pack(f"<{t.dim()}q", *t.shape),
            bytes(order),
            struct.pack("<Q", len(data)),
            data,
        ]
    return b"".join(parts)


def decode_tensors(data: bytes, what: str) -> list[Any]:
    """The tensors of a tensor file the runner wrote (an output it cannot carry is None)."""
    import torch

    by_code = {code: getattr(torch, name) for name, code in SCALAR_TYPES.items()}
    try:
        if data[:4] != MAGIC:
            raise BundleError(f"{what} is not a tensor file")
        (count,), at = struct.unpack_from("<I", data, 4), 8
        out: list[Any] = []
        for _ in range(count):
            code, ndim = struct.unpack_from("<iI", data, at)
            sizes = struct.unpack_from(f"<{ndim}q", data, at + 8)
            at += 8 + 8 * ndim
            order = tuple(data[at : at + ndim])
            at += ndim
            (nbytes,) = struct.unpack_from("<Q", data, at)
            raw = data[at + 8 : at + 8 + nbytes]
            at += 8 + nbytes
            if len(raw) != nbytes:
                raise BundleError(f"{what} is truncated")
            if code == -1:
                out.append(None)
                continue
            if code not in by_code:
                raise BundleError(f"{what} holds ScalarType {code}, which this host does not read")
            flat = (
                torch.frombuffer(bytearray(raw), dtype=torch.uint8)
                if nbytes
                else torch.empty(0, dtype=torch.uint8)
            )
            if sorted(order) != list(range(ndim)):
                raise BundleError(f"{what} holds a tensor with dim order {order}")
            laid_out = flat.view(by_code[code]).reshape([sizes[d] for d in order])
            inverse = sorted(range(ndim), key=lambda d: order[d])
            out.append(laid_out.permute(inverse).clone(memory_format=torch.preserve_format))
        return out
    except struct.error:
        raise BundleError(f"{what} is truncated") from None


class Bundle:
    """A bundle being written into a local directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.lines = [f"executorch-conformance-bundle {FORMAT}"]
        self._count = 0

    def _name(self, suffix: str) -> str:
        self._count += 1
        return f"f{self._count}{suffix}"

    def add_file(self, source: bytes | str | Path, suffix: str) -> str:
        """Puts a program, .ptd or tensor file into the bundle; returns its name there."""
        name = self._name(suffix)
        if isinstance(source, bytes):
            (self.root / name).write_bytes(source)
        else:
            if not Path(source).is_file():
                raise BundleError(f"{source} does not exist")
            shutil.copyfile(source, self.root / name)
        return name

    def add_programs(self, programs: list[tuple[str, bytes]]) -> list[tuple[str, str]]:
        """Puts each (sample, .pte bytes) into the bundle under a name of its own ('p0', 'p1', ...: a sample's
        name may hold spaces); the (bundle name, file) pairs for ``entry(program=...)``, in order."""
        return [(f"p{i}", self.add_file(pte, ".pte")) for i, (_name, pte) in enumerate(programs)]

    def add_tensors(self, tensors: list[Any]) -> str:
        return self.add_file(encode_tensors(tensors), ".bin")

    def entry(self, entry_id: str, kind: str, what: str = "", **fields: Any) -> None:
        """An entry; ``fields``: program=[(name, file)], data=file, inputs=file, copies=n, threads=n,
        iterations=n, rounds=[(i, name, file)], share_arenas=True."""
        self.lines.append(f"entry {entry_id} {kind}")
        if what:
            self.lines.append("what " + " ".join(what.split()))
        for name, file in fields.get("program", ()):
            self.lines.append(f"program {name} {file}")
        for key in ("data", "inputs", "copies", "threads", "iterations"):
            if fields.get(key) is not None:
                self.lines.append(f"{key} {fields[key]}")
        for index, name, file in fields.get("rounds", ()):
            self.lines.append(f"round {index} {name} {file}")
        if fields.get("share_arenas"):
            self.lines.append("share_arenas")
        self.lines.append("end")

    def close(self) -> None:
        """Writes the manifest."""
        (self.root / "manifest.txt").write_text("\n".join(self.lines) + "\n")


@dataclasses.dataclass
class EntryResult:
    """One ``results/<id>.txt``."""

    ok: bool
    step: str | None = None
    error: str | None = None
    outputs: str | None = None
    #: (name, copy, round, file) of each output file of a repeat entry; of a concurrent entry,
    #: (name, thread, input set, file); of a methods entry, (method, 0, call, file)
    output_files: list[tuple[str, int, int, str]] = dataclasses.field(default_factory=list)
    #: of a methods entry: call -> the seconds its execute took
    seconds: dict[int, float] = dataclasses.field(default_factory=dict)
    #: (backend name, is_available) of a describe entry
    registered: list[tuple[str, bool]] = dataclasses.field(default_factory=list)
    mapped: list[str] = dataclasses.field(default_factory=list)


def read_result(path: Path) -> EntryResult:
    """The result file at ``path``; BundleError if it is missing or has no status line."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        raise BundleError(f"the runner wrote no result {path.name}") from None
    result, status = EntryResult(ok=False), None
    for line in text.splitlines():
        try:
            status = _read_line(result, line, status)
        except ValueError:
            raise BundleError(f"the result {path.name} has a malformed line: {line[:200]!r}") from None
    if status is None:
        raise BundleError(f"the result {path.name} has no status line (the runner stopped while writing it)")
    result.ok = status == "ok"
    return result


def _read_line(result: EntryResult, line: str, status: str | None) -> str | None:
    """Adds one line of a result file to ``result``; the status so far. ValueError if it is malformed."""
    key, _, value = line.partition(" ")
    if key == "status":
        status = value
    elif key in ("step", "error", "outputs"):
        setattr(result, key, value)
    elif key == "output":
        name, copy, round_, file = value.split(" ")
        result.output_files.append((name, int(copy), int(round_), file))
    elif key == "seconds":
        call, took = value.split(" ")
        result.seconds[int(call)] = float(took)
    elif key == "registered":
        name, available = value.rsplit(" ", 1)
        result.registered.append((name, available == "1"))
    elif key == "mapped":
        result.mapped.append(value)
    return status
