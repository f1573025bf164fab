"""What one release of a backend writes, for the grid: its sample models and one program per operator.

``write(release, spec, timeout)`` starts a vendor process with the release's interpreter, reads the
descriptor there, and lowers with that release's partitioners:

- every sample model (``sample_models``), judged with the sample's declared tolerances;
- for every (operator, dtype) the release declares, one case of the operator corpus (the first plain one
  the declaration does not exclude), judged with the corpus's tolerance widened as the release declares
  (``conformance.operators.runner.tolerance_for``).

So every opcode a release can write is in some program: a release that adds an operator is judged on it.
What the release cannot lower is listed in ``Written.not_written`` with the reason; it is the release's
own business (OPS-1 judges it), not a cell of the grid.
"""

from __future__ import annotations

import dataclasses

from conformance.descriptor import BackendDescriptor, DescriptorError
from conformance.operators import corpus
from conformance.operators.runner import tolerance_for
from conformance.operators.spec import Case
from conformance.outcomes import CheckFailed
from conformance.release_grid.releases import Release, ReleaseGridError
from conformance.vendor import interpreter as vendor_interpreter
from conformance.vendor.process import VendorProcess
from conformance.vendor.remote_descriptor import describe
from conformance.vendor.task_registry import LOWER, LOWER_OPERATOR_BATCH, SAMPLE


@dataclasses.dataclass(frozen=True)
class Program:
    """One program a release wrote: its .pte, the inputs (packed), eager PyTorch's outputs (packed) and
    the tolerances its outputs are judged with."""

    name: str
    pte: bytes
    inputs: bytes
    expected: bytes
    rtol: float
    atol: float


@dataclasses.dataclass(frozen=True)
class Written:
    """What one release wrote: the backend and version its descriptor names, its programs, and what it
    could not lower (name, reason)."""

    release: str
    backend_id: str
    version: str
    programs: tuple[Program, ...]
    not_written: tuple[tuple[str, str], ...]


def operator_case(descriptor: BackendDescriptor, op: str, dtype: str) -> Case | None:
    """The corpus case of ``op`` and ``dtype`` a grid lowers: the first the declaration does not exclude,
    without a trait if there is one (dynamic and quantized cases only where the backend declares them)."""
    declaration = descriptor.operators[op]
    usable = [
        c
        for c in corpus.cases(op, dtype)
        if not declaration.excludes(c)
        and ("dynamic" not in c.traits or declaration.dynamic)
        and ("quantized" not in c.traits or descriptor.quantized is not None)
        and all(other in descriptor.operators for other in c.requires)
    ]
    plain = [c for c in usable if not c.traits]
    return next(iter(plain or usable), None)


def _samples(
    descriptor: BackendDescriptor, vendor: VendorProcess, timeout: float, found: list, missed: list
) -> None:
    for sample in descriptor.sample_models:
        name = f"sample {sample.name}"
        try:
            lowering = vendor.call(
                LOWER, sample.name, "default", None, None, what=f"lowering {name}", timeout=timeout
            )
            if lowering.pte is None:
                missed.append((name, lowering.error or "lowering failed"))
                continue
            data = vendor.call(SAMPLE, sample.name, what=f"making {name}", timeout=timeout)
        except CheckFailed as exc:
            missed.append((name, str(exc)))
            continue
        found.append(Program(name, lowering.pte, data["inputs"], data["expected"], sample.rtol, sample.atol))


def _operators(
    descriptor: BackendDescriptor, vendor: VendorProcess, timeout: float, found: list, missed: list
) -> None:
    for op, dtype in descriptor.operators.pairs():
        case = operator_case(descriptor, op, dtype)
        if case is None:
            continue  # the corpus has no case the release can be asked for (OPS-1 says why)
        name = f"{op} {dtype} ({case.name})"
        try:
            lowered = vendor.call(LOWER_OPERATOR_BATCH, [case.key], what=f"lowering {name}", timeout=timeout)
        except CheckFailed as exc:
            missed.append((name, str(exc)))
            continue
        if "pte" not in lowered:
            missed.append((name, str(lowered.get("failed", "lowering failed"))))
            continue
        record = lowered["cases"][0]
        rtol, atol, _ = tolerance_for(descriptor.operators[op], case, record)
        found.append(Program(name, lowered["pte"], lowered["inputs"], record["expected"], rtol, atol))


def write(release: Release, spec: str, timeout: float, operators: bool = True) -> Written:
    """The programs ``release`` writes for the backend ``spec`` (entry point or module:attr): its samples,
    and with ``operators`` one program per declared operator; ReleaseGridError if its descriptor cannot be
    read in its environment."""
    vendor_interpreter.use(release.interpreter)
    vendor = VendorProcess(spec)
    try:
        try:
            descriptor, _ = describe(spec, vendor, timeout)
        except DescriptorError as exc:
            raise ReleaseGridError(f"release {release.label} ({release.interpreter.path}): {exc}") from None
        found: list[Program] = []
        missed: list[tuple[str, str]] = []
        _samples(descriptor, vendor, timeout, found, missed)
        if operators:
            _operators(descriptor, vendor, timeout, found, missed)
    finally:
        vendor.close()
        vendor_interpreter.use(None)
    return Written(release.label, descriptor.backend_id, descriptor.version, tuple(found), tuple(missed))
