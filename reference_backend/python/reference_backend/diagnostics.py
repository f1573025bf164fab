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

from reference_backend.pte_blobs import DelegateBlob, delegate_blobs
from reference_backend.runtime import BACKEND_ID, Judgement, judge_blob, load_runtime


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


def check_program(program: bytes | str | Path) -> list[DelegateReport]:
    """Raises ProgramCompatibilityError if a delegate of ``program`` cannot run
    here; warns ReexportRecommendedWarning for blobs that run but are old."""
    reports = inspect_program(program)
    problems = []
    for r in reports:
        where = f"method {r.blob.plan!r}, delegate {r.blob.index}"
        if not r.registered:
            problems.append(
                f"{where}: backend {r.blob.backend_id!r} is not registered in this process; "
                f"load its runtime library first (for {BACKEND_ID}: reference_backend.load_runtime())"
            )
        elif r.judgement is not None and not r.judgement.runnable:
            problems.append(f"{where}: {r.judgement.message}")
        elif r.judgement is not None and r.judgement.message:
            warnings.warn(f"{where}: {r.judgement.message}", ReexportRecommendedWarning, stacklevel=2)
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


def load_method(program: bytes | str | Path, method: str = "forward") -> LoadedMethod:
    """``Runtime.get().load_program(program).load_method(method)``, but a
    failure caused by a delegate raises ProgramCompatibilityError naming it."""
    from executorch.runtime import Runtime

    load_runtime()
    data = bytes(program) if isinstance(program, (bytes, bytearray)) else None
    try:
        loaded = Runtime.get().load_program(data if data is not None else Path(program))
        result = LoadedMethod(loaded.load_method(method), data)
    except RuntimeError as exc:
        try:
            check_program(data if data is not None else program)
        except ProgramCompatibilityError as explained:
            raise explained from exc
        raise
    # Loaded: still tell the user about blobs that run but should be re-exported.
    check_program(data if data is not None else program)
    return result
