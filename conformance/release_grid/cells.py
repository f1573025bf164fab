"""What one runtime release does with the programs every release wrote: each program judged.

``run(release, spec, written, timeout)`` starts a vendor process with the runtime release's interpreter,
loads the runtime there and executes every program, one by one, each with its own timeout. A program's
``Outcome`` is one of:

- ``runs``: executed, and every output within the program's tolerances of eager PyTorch's;
- ``refused``: refused with DelegateInvalidCompatibility (0x30) and a log line naming the runtime's
  version (the line is kept);
- a failure: ``wrong`` (executed, outputs differ), ``refused-unclearly`` (0x30 without a log line naming
  the runtime's version), ``error`` (any other error: 0x23 for an opcode the runtime does not know, say),
  ``crashed``, ``timed-out``, or ``no-runtime`` (the runtime release could not be loaded at all).

A cell (writer, runtime) passes when no program fails; on the diagonal (a release's runtime and its own
blobs) every program must run.
"""

from __future__ import annotations

import dataclasses
import re

from conformance.comparison import assert_outputs_close
from conformance.outcomes import CheckFailed, VendorCrashed, VendorTimedOut
from conformance.release_grid.programs import Program, Written
from conformance.release_grid.releases import Release
from conformance.vendor import interpreter as vendor_interpreter
from conformance.vendor.process import VendorProcess, backend_lines
from conformance.vendor.records import unpack
from conformance.vendor.task_registry import EXECUTE, LOAD_RUNTIME
from conformance.version_numbers import names_release

RUNS, REFUSED = "runs", "refused"
WRONG, REFUSED_UNCLEARLY, ERROR, CRASHED, TIMED_OUT, NO_RUNTIME = (
    "wrong",
    "refused-unclearly",
    "error",
    "crashed",
    "timed-out",
    "no-runtime",
)
#: Outcomes that pass a cell off the diagonal (on it, only RUNS).
ACCEPTABLE = frozenset({RUNS, REFUSED})
_COMPATIBILITY = re.compile(r"0x:?30\b")


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What the runtime did with one program: its kind (above) and what shows it (the log line of a
    refusal, the error, the mismatch)."""

    program: str
    kind: str
    detail: str = ""


@dataclasses.dataclass(frozen=True)
class Cell:
    """The programs of release ``writer`` on the runtime of release ``runtime``."""

    writer: str
    runtime: str
    outcomes: tuple[Outcome, ...]

    @property
    def diagonal(self) -> bool:
        return self.writer == self.runtime

    def failures(self) -> list[Outcome]:
        """The outcomes that fail the cell (on the diagonal, whatever did not run)."""
        allowed = {RUNS} if self.diagonal else ACCEPTABLE
        return [o for o in self.outcomes if o.kind not in allowed]

    @property
    def passed(self) -> bool:
        return not self.failures()


def judge(program: Program, answer: dict, log_text: str, runtime_version: str) -> Outcome:
    """The outcome of ``program`` from the ``execute`` task's answer and what the runtime logged."""
    error = answer.get("error")
    if error is None:
        try:
            assert_outputs_close(
                program.name, unpack(answer["outputs"]), unpack(program.expected), program.rtol, program.atol
            )
        except CheckFailed as exc:
            return Outcome(program.name, WRONG, str(exc))
        return Outcome(program.name, RUNS)
    if _COMPATIBILITY.search(error) is None:
        said = backend_lines(log_text.splitlines())[-1:]
        return Outcome(
            program.name,
            ERROR,
            f"{answer.get('step', 'load')}: {error}"
            + (f"; the runtime logged: {said[0].strip()[:300]}" if said else ""),
        )
    lines = [line.strip() for line in log_text.splitlines() if names_release(line, runtime_version)]
    if not lines:
        last = log_text.strip().splitlines()[-1:] or ["(nothing logged)"]
        return Outcome(
            program.name,
            REFUSED_UNCLEARLY,
            f"refused with 0x30, but no log line names the runtime's version {runtime_version}; the last "
            f"line logged: {last[0][:300]!r}",
        )
    return Outcome(program.name, REFUSED, lines[0][:300])


def run(release: Release, spec: str, written: list[Written], timeout: float) -> list[Cell]:
    """The cells of ``written`` (every writer) on the runtime of ``release``."""
    runtime_version = next(w.version for w in written if w.release == release.label)
    vendor_interpreter.use(release.interpreter)
    vendor = VendorProcess(spec)
    cells = []
    try:
        try:
            load = vendor.call(LOAD_RUNTIME, what="loading the runtime", timeout=timeout)
            problem = load.error
        except CheckFailed as exc:
            problem = str(exc)
        for w in written:
            if problem is not None:
                outcomes = [Outcome(p.name, NO_RUNTIME, problem) for p in w.programs]
            else:
                outcomes = [_execute(vendor, p, w.release, runtime_version, timeout) for p in w.programs]
            cells.append(Cell(w.release, release.label, tuple(outcomes)))
    finally:
        vendor.close()
        vendor_interpreter.use(None)
    return cells


def _execute(
    vendor: VendorProcess, program: Program, writer: str, runtime_version: str, timeout: float
) -> Outcome:
    what = f"{program.name} written by release {writer}"
    try:
        answer, log_text = vendor.call_with_log(
            EXECUTE, program.pte, None, what, program.inputs, what=what, timeout=timeout
        )
    except VendorCrashed as exc:
        return Outcome(program.name, CRASHED, str(exc))
    except VendorTimedOut as exc:
        return Outcome(program.name, TIMED_OUT, str(exc))
    except CheckFailed as exc:
        return Outcome(program.name, ERROR, str(exc))
    return judge(program, answer, log_text, runtime_version)
