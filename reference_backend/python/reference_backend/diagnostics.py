"""Clear errors in Python for programs the runtime refuses.

ExecuTorch reports a refused delegate as ``RuntimeError: ... error: 0x:30``
and leaves the reason in the C++ log. ``check_program`` reads the program's
delegate blobs, asks the loaded runtime for its verdict on each (the same
code as init()), and raises an exception carrying the same facts as that log
line. ``load_method`` wraps the standard API with this explanation.
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

from backend_kit.header import HeaderError, decode, payload_of
from reference_backend.pte_blobs import DelegateBlob, PteError, delegate_blobs, pte_named_data, read_ptd_index
from reference_backend.runtime import BACKEND_ID, Judgement, judge_blob, load_runtime
from reference_backend.serialize import SerializationError, named_entries


class ProgramCompatibilityError(RuntimeError):
    """A program cannot run in this process; the message says why and how to fix it."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


class ReexportRecommendedWarning(UserWarning):
    """A blob runs, but was written in an older format than the runtime's newest."""


@dataclasses.dataclass(frozen=True)
class DelegateReport:
    """One delegate of the program and what this process makes of it."""

    blob: DelegateBlob
    registered: bool
    judgement: Judgement | None  # for ReferenceBackend blobs only


def _read(program: bytes | str | Path) -> bytes:
    return program if isinstance(program, (bytes, bytearray)) else Path(program).read_bytes()


def inspect_program(program: bytes | str | Path) -> list[DelegateReport]:
    """The verdict of this process on each delegate of ``program``."""
    import executorch.runtime

    load_runtime()
    registered = set(executorch.runtime.Runtime.get().backend_registry.registered_backend_names)
    reports = []
    for blob in delegate_blobs(bytes(_read(program))):
        judgement = judge_blob(blob.data) if blob.backend_id == BACKEND_ID else None
        reports.append(DelegateReport(blob, blob.backend_id in registered, judgement))
    return reports


def _named_data_problems(
    blob: DelegateBlob, pte: bytes, data_path: str | Path | None, cache: dict
) -> list[str]:
    """Why the named data of ``blob`` cannot be found, in the words of the
    runtime's log line (src/backend.cpp, named_data_error)."""
    try:
        header = decode(blob.data)
        entries = named_entries(payload_of(blob.data), header.blob_format[1])
    except (HeaderError, SerializationError):
        return []  # the runtime's verdict on the blob says what is wrong
    if not entries:
        return []
    if "pte" not in cache:
        try:
            cache["pte"] = pte_named_data(pte)
        except PteError:
            cache["pte"] = {}
    if "ptd" not in cache:
        try:
            cache["ptd"] = read_ptd_index(data_path) if data_path is not None else {}
        except (OSError, PteError) as exc:
            return [f"{BACKEND_ID}: data file {str(data_path)!r} cannot be read: {exc}"]
    available = {**cache["ptd"], **cache["pte"]}  # the runtime merges both maps
    problems = []
    unloaded: dict[str, list] = {}  # file -> its entries, when none of its keys is found
    for entry in entries:
        size = available.get(entry.key)
        where = f"'{entry.file}'" if entry.file else "the .pte"
        if size is not None and size != entry.nbytes:
            problems.append(
                f"{BACKEND_ID}: named data '{entry.key}' has {size} bytes, the blob expects {entry.nbytes}; "
                f"{where} was not written with this program: re-export both"
            )
        elif size is None and not entry.file:
            problems.append(
                f"{BACKEND_ID}: named data '{entry.key}' ({entry.nbytes} bytes) is missing from the .pte; "
                "the program is damaged: re-export it"
            )
        elif size is None:
            if any(e.file == entry.file and e.key in available for e in entries):
                problems.append(
                    f"{BACKEND_ID}: named data '{entry.key}' ({entry.nbytes} bytes) is missing from the data "
                    f"loaded for '{entry.file}': that file was not written with this program"
                )
            else:
                unloaded.setdefault(entry.file, []).append(entry)
    for file, missing in unloaded.items():
        first = missing[0]
        more = f"; {len(missing) - 1} more of its keys are missing too" if len(missing) > 1 else ""
        given = (
            f" (the data file given, {Path(data_path).name}, holds none of its keys{more})"
            if data_path is not None
            else f" (Python: load_method(program, data_path='{file}'){more})"
        )
        problems.append(
            f"{BACKEND_ID}: named data '{first.key}' ({first.nbytes} bytes) not found: external file "
            f"'{file}' was not loaded; load the program with it{given}"
        )
    return problems


def check_program(program: bytes | str | Path, data_path: str | Path | None = None) -> list[DelegateReport]:
    """Raises ProgramCompatibilityError if a delegate of ``program`` cannot run
    here, also when named data it needs is in neither the program nor the
    data file ``data_path`` (a .ptd); warns ReexportRecommendedWarning for
    blobs that run but are old."""
    pte = bytes(_read(program))
    reports = inspect_program(pte)
    problems = []
    cache: dict = {}
    for r in reports:
        where = f"method {r.blob.plan!r}, delegate {r.blob.index}"
        if not r.registered:
            problems.append(
                f"{where}: backend {r.blob.backend_id!r} is not registered in this process; "
                f"load its runtime library first (for {BACKEND_ID}: reference_backend.load_runtime())"
            )
        elif r.judgement is not None and not r.judgement.runnable:
            problems.append(f"{where}: {r.judgement.message}")
        else:
            if r.judgement is not None and r.judgement.message:
                warnings.warn(f"{where}: {r.judgement.message}", ReexportRecommendedWarning, stacklevel=2)
            if r.judgement is not None:
                problems.extend(f"{where}: {p}" for p in _named_data_problems(r.blob, pte, data_path, cache))
    if problems:
        raise ProgramCompatibilityError(problems)
    return reports


class LoadedMethod:
    """A loaded method that also keeps its program's bytes alive.

    ExecuTorch 1.5's ``Runtime.load_program(bytes)`` neither copies nor holds
    the buffer, so a method loaded from a temporary ``bytes`` object reads
    freed memory (seen as "Invalid number of inputs provided. Expected 0").
    Attributes other than ``execute`` are those of the ExecuTorch Method.
    """

    def __init__(self, method, data: bytes | None) -> None:
        self._method = method
        self._data = data

    def execute(self, inputs):
        return self._method.execute(inputs)

    def __getattr__(self, name):
        return getattr(self._method, name)


def load_method(
    program: bytes | str | Path, method: str = "forward", data_path: str | Path | None = None
) -> LoadedMethod:
    """``Runtime.get().load_program(program, data_path=data_path).load_method(method)``,
    but a failure caused by a delegate raises ProgramCompatibilityError naming it.
    ``data_path``: the .ptd file holding data the program keeps outside the .pte."""
    from executorch.runtime import Runtime

    load_runtime()
    data = bytes(program) if isinstance(program, (bytes, bytearray)) else None
    try:
        loaded = Runtime.get().load_program(data if data is not None else Path(program), data_path=data_path)
        result = LoadedMethod(loaded.load_method(method), data)
    except RuntimeError as exc:
        try:
            check_program(data if data is not None else program, data_path)
        except ProgramCompatibilityError as explained:
            raise explained from exc
        raise
    # Loaded: still tell the user about blobs that run but should be re-exported.
    check_program(data if data is not None else program, data_path)
    return result
