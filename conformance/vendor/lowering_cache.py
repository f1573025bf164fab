"""The lowering cache: lowered programs kept between runs, addressed by what made them.

Contract:

- An entry is the result of one lowering task (``CACHED_TASKS``) or the deterministic vendor error it
  raised (a plain ``CheckFailed``), never a crash or a timeout. Its key (``key``) is a digest of the
  task's name and arguments, the descriptor's spec, and the run's fingerprint (``FINGERPRINT``, computed
  once per run in the vendor process): the torch, executorch and suite versions, a digest of the suite's
  own files, the files of the vendor's Python packages the lowering uses (the runtime libraries left
  out: a C++-only rebuild keeps the key), every installed distribution's name and version, and the
  values of the environment variables the descriptor names in ``lowering_environment``.
- Entries live in ``$EXECUTORCH_CONFORMANCE_CACHE_DIR``, else ``$XDG_CACHE_HOME`` (or ``~/.cache``)
  ``/executorch-conformance/lowerings``; each is written to a temporary file and renamed into place, so
  concurrent processes writing one key leave one whole entry. An entry that is unreadable, truncated or
  not what the suite wrote is a miss, and is removed; the cache never fails a run.
- The directory is kept under ``max_bytes`` (``$EXECUTORCH_CONFORMANCE_CACHE_MAX_BYTES``, default 2 GiB,
  a ``K``/``M``/``G`` suffix accepted): after a write the least recently used entries (a hit touches
  its entry) are removed.
- A run may read and write (the default), only write (a certify run: it never reuses a lowering it did
  not make itself), or not use the cache at all (``--no-cache``). The AOT-5 re-lowerings bypass it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import pickle
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from conformance.byte_sizes import parse_bytes
from conformance.outcomes import CheckFailed
from conformance.vendor import task_registry as tasks
from conformance.vendor.process import load_result

#: The tasks whose results are cached. LOWER only without an out_dir (with one, the result names files in
#: the run's scratch directory, which the next run does not have). The capability flows return plain
#: records (bytes, lists, dicts, PartitionRecords) made by export and lowering alone, so they are cached
#: too; every task that touches the runtime is not (its faults are what the runtime checks look for).
CACHED_TASKS = frozenset(
    {
        tasks.LOWER,
        tasks.LOWER_OPERATOR_BATCH,
        tasks.LOWER_MODEL,
        tasks.LOWER_LLM,
        tasks.QUANTIZED_FLOW,
        tasks.DYNAMIC_FLOW,
        tasks.COMPOSITION_FLOW,
        tasks.STATE_FLOW,
        tasks.INPUTS_FLOW,
        tasks.METHOD_FLOW,
    }
)

DIR_ENV = "EXECUTORCH_CONFORMANCE_CACHE_DIR"
MAX_BYTES_ENV = "EXECUTORCH_CONFORMANCE_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 2 << 30
#: The first bytes of every entry: the format, then the payload's sha256 (hex) on one line.
MAGIC = b"executorch-conformance lowering 1\n"
SUFFIX = ".entry"


def cacheable(task: str, args: tuple[Any, ...]) -> bool:
    """Whether the call ``task(*args)`` is one whose result the cache keeps."""
    if task not in CACHED_TASKS:
        return False
    return not (task == tasks.LOWER and len(args) > 2 and args[2] is not None)  # out_dir given


def default_dir() -> Path:
    """Where the cache lives (see the module docstring)."""
    given = os.environ.get(DIR_ENV)
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "executorch-conformance" / "lowerings"


def default_max_bytes() -> int:
    given = os.environ.get(MAX_BYTES_ENV)
    if given:
        try:
            return parse_bytes(given)
        except ValueError:
            pass  # a malformed bound is the default bound, not a failed run
    return DEFAULT_MAX_BYTES


def key(fingerprint: str, spec: str | bytes, task: str, args: tuple[Any, ...]) -> str:
    """The entry's address: a digest of everything that decides what the lowering makes."""
    spec_part = spec if isinstance(spec, str) else "pickled:" + hashlib.sha256(spec).hexdigest()
    text = json.dumps([fingerprint, spec_part, task, list(args)], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


class LoweringCache:
    """The cache directory of one run; ``read`` False: lookups always miss (the run only writes)."""

    def __init__(
        self, directory: Path | None = None, max_bytes: int | None = None, read: bool = True
    ) -> None:
        self.directory = Path(directory) if directory is not None else default_dir()
        self.max_bytes = default_max_bytes() if max_bytes is None else max_bytes
        self.read = read
        self.hits = 0
        self._lock = threading.Lock()

    def _path(self, address: str) -> Path:
        return self.directory / address[:2] / f"{address}{SUFFIX}"

    def get(self, address: str) -> tuple[str, Any] | None:
        """('result', the stored result) or ('error', the stored vendor error's message), None for a miss.
        An entry that cannot be read or is not whole is removed and is a miss."""
        if not self.read:
            return None
        path = self._path(address)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        found = self._decode(data)
        if found is None:
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: evicted last
        with self._lock:
            self.hits += 1
        return found

    @staticmethod
    def _decode(data: bytes) -> tuple[str, Any] | None:
        if not data.startswith(MAGIC):
            return None
        head, _, payload = data[len(MAGIC) :].partition(b"\n")
        if hashlib.sha256(payload).hexdigest().encode() != head:
            return None
        try:
            found = load_result(payload, "a cached lowering")
        except CheckFailed:
            return None
        if not (isinstance(found, tuple) and len(found) == 2 and found[0] in ("result", "error")):
            return None
        if found[0] == "error" and not isinstance(found[1], str):
            return None
        return found

    def entries(self) -> Iterator[tuple[str, Any]]:
        """Every whole entry of the directory as ``get`` gives it back, ('result', value) or ('error',
        message), in no particular order: what a run lowered, for a test or a tool to look at (a lookup is
        ``get``). An entry that cannot be read or is not whole is skipped, and left for ``get`` to remove;
        reading does not count as a hit nor make an entry recently used."""
        try:
            paths = sorted(self.directory.glob(f"??/*{SUFFIX}"))
        except OSError:
            return
        for path in paths:
            try:
                data = path.read_bytes()
            except OSError:
                continue
            found = self._decode(data)
            if found is not None:
                yield found

    def put_result(self, address: str, value: Any) -> None:
        self._put(address, ("result", value))

    def put_error(self, address: str, message: str) -> None:
        self._put(address, ("error", message))

    def _put(self, address: str, entry: tuple[str, Any]) -> None:
        """Writes the entry atomically; a write that fails (a full disk, a read-only cache) is dropped."""
        try:
            buffer = io.BytesIO()
            pickle.dump(entry, buffer, protocol=pickle.HIGHEST_PROTOCOL)
            payload = buffer.getvalue()
        except Exception:  # noqa: BLE001  what cannot be pickled is not cached
            return
        data = MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
        if len(data) > self.max_bytes:
            return
        path = self._path(address)
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            tmp = None
        except OSError:
            return
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        self.evict()

    def evict(self) -> None:
        """Removes the least recently used entries until the directory holds at most ``max_bytes``."""
        entries = []
        total = 0
        try:
            for sub in self.directory.iterdir():
                if not sub.is_dir():
                    continue
                for entry in sub.iterdir():
                    if not entry.name.endswith(SUFFIX):
                        continue
                    try:
                        st = entry.stat()
                    except OSError:
                        continue
                    entries.append((st.st_mtime, st.st_size, entry))
                    total += st.st_size
        except OSError:
            return
        if total <= self.max_bytes:
            return
        for _mtime, size, entry in sorted(entries, key=lambda e: e[0]):
            with contextlib.suppress(OSError):
                entry.unlink()
                total -= size
            if total <= self.max_bytes:
                return
