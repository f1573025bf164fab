"""The decision: will this program run on that device (an ExecuTorch runtime release and the versions
of the backend runtimes it has)? One ``Answer`` for the program and one per delegate: ``runs``,
``refused`` (what the user would see there, and what to change) or ``unknown`` (no basis), each with
its basis (``why``).

- The program: ExecuTorch's measured program compatibility (``measured.json``): the runtime release
  was measured running programs of this file identifier, with these operators on its kernels, from
  exporters up to the one the program records. Anything else is unknown.
- A delegate of a backend with declared acceptance rules (``rules.py``): the rule of the runtime
  version the device has, on that ExecuTorch release, applied to the blob's contract header by the
  contract kit's verdict, which gives the very log line the runtime writes.
- A delegate of a backend whose runtime ships inside ExecuTorch (XNNPACK): the blob formats that
  release was measured running.
- A delegate whose backend the device does not have: refused by ExecuTorch's method loader
  (NotFound, C-RT-6).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from backend_kit.header import COMPATIBLE, INCOMPATIBLE, REEXPORT_RECOMMENDED
from conformance.compat.errors import CompatInputError
from conformance.compat.measured import Measured, load_measured
from conformance.compat.program import DelegateFacts, ProgramFacts, read_program
from conformance.compat.rules import AcceptanceRules, judge_blob

RUNS, REFUSED, UNKNOWN = "runs", "refused", "unknown"
#: Exit codes of ``executorch-conformance compat`` (2: bad input; 3: a bug of the tool).
EXIT_CODES = {RUNS: 0, REFUSED: 1, UNKNOWN: 5}

_SPEC = re.compile(r"^(?P<id>[A-Za-z_][A-Za-z0-9_.\-]*)(?:==(?P<version>[^=\s]+))?$")


@dataclasses.dataclass(frozen=True)
class BackendSpec:
    """A backend runtime the device has: its id and version (None: the runtime ships in ExecuTorch)."""

    backend_id: str
    version: str | None = None

    def __str__(self) -> str:
        return self.backend_id + (f"=={self.version}" if self.version else "")


def parse_runtime(text: str) -> str:
    """The ExecuTorch release ``text`` names ('1.4.1'); CompatInputError if it is not a version."""
    try:
        return str(Version(text))
    except InvalidVersion:
        raise CompatInputError(
            f"--runtime {text!r} is not an ExecuTorch release (a version such as 1.4.1)"
        ) from None


def parse_backend(text: str | BackendSpec) -> BackendSpec:
    """'ReferenceBackend==0.2.0' (or 'XnnpackBackend') as a BackendSpec; CompatInputError if malformed."""
    if isinstance(text, BackendSpec):
        return text
    m = _SPEC.match(text.strip())
    if not m:
        raise CompatInputError(
            f"--backend {text!r} is not BACKEND_ID==VERSION (for example ReferenceBackend==0.2.0; "
            "XnnpackBackend alone for a backend that ships inside ExecuTorch)"
        )
    version = m.group("version")
    if version is not None:
        try:
            version = str(Version(version))
        except InvalidVersion:
            raise CompatInputError(
                f"--backend {text!r}: {version!r} is not a version (PEP 440, for example 0.2.0)"
            ) from None
    return BackendSpec(m.group("id"), version)


@dataclasses.dataclass(frozen=True)
class Answer:
    """The verdict on the program or one delegate.

    error: what ExecuTorch raises there (``Failed to load method forward, error: 0x:30``), or None;
    log: the line the runtime logs (the refusal, or the re-export warning of a blob that runs);
    fix: what to change, or None; why: the basis of the verdict.
    """

    target: str
    status: str
    why: str
    error: str | None = None
    log: str | None = None
    fix: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Prediction:
    """Every answer for one program on one device; ``status`` is the worst of them
    (refused over unknown over runs)."""

    program: str
    runtime: str
    backends: tuple[BackendSpec, ...]
    answers: tuple[Answer, ...]

    @property
    def status(self) -> str:
        statuses = {a.status for a in self.answers}
        return REFUSED if REFUSED in statuses else UNKNOWN if UNKNOWN in statuses else RUNS

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def to_json(self) -> dict[str, Any]:
        return {
            "program": self.program,
            "runtime": self.runtime,
            "backends": [str(b) for b in self.backends],
            "status": self.status,
            "exit_code": self.exit_code,
            "answers": [a.to_json() for a in self.answers],
        }


def _fix_of(line: str) -> str | None:
    _, sep, fix = line.partition("; fix: ")
    return fix if sep else None


def _span(versions: Sequence[str]) -> str:
    return f"{versions[0]}-{versions[-1]}" if len(versions) > 1 else versions[0] if versions else "none"


def _program_answer(program: ProgramFacts, runtime: str, measured: Measured) -> Answer:
    rt = measured.runtime(runtime)
    if rt is None:
        return Answer(
            "program",
            UNKNOWN,
            f"executorch {runtime} was not measured (the grid measured {', '.join(measured.releases())}; "
            "matrix/README.md)",
        )
    if program.file_identifier not in rt.program_identifiers:
        return Answer(
            "program",
            UNKNOWN,
            f"executorch {runtime} was measured loading programs of file identifier "
            f"{', '.join(sorted(rt.program_identifiers)) or 'none'}, not {program.file_identifier!r}",
        )
    unmeasured = [op for op in program.operators if op not in rt.operators]
    if unmeasured:
        return Answer(
            "program",
            UNKNOWN,
            f"operator(s) {', '.join(unmeasured[:5])}{' ...' if len(unmeasured) > 5 else ''} (run by ExecuTorch's "
            f"kernels) are in no program measured running on executorch {runtime}",
        )
    exporters = sorted({d.exported_with for d in program.delegates if d.exported_with}, key=Version)
    newest = rt.exported_with[-1] if rt.exported_with else None
    if exporters and newest and Version(exporters[-1]) > Version(newest):
        return Answer(
            "program",
            UNKNOWN,
            f"the program was exported with executorch {exporters[-1]} (its contract header says so); executorch "
            f"{runtime} was measured on programs exported with {_span(rt.exported_with)} only",
        )
    exported = (
        f"this one was exported with executorch {', '.join(exporters)}"
        if exporters
        else "which executorch exported this one is not recorded (no contract header): judged by its format"
    )
    return Answer(
        "program",
        RUNS,
        f"executorch {runtime} ran programs of file identifier {program.file_identifier} exported with "
        f"{_span(rt.exported_with)} ({rt.grid}); {exported}",
    )


def _not_registered(d: DelegateFacts) -> Answer:
    return Answer(
        d.where,
        REFUSED,
        f"the device has no runtime for backend {d.backend_id!r} (no --backend {d.backend_id}): ExecuTorch's "
        "method loader refuses the method with NotFound (contract clause C-RT-6)",
        error=f"Failed to load method {d.plan}, error: 0x:20",
        log=f"Backend {d.backend_id} is not registered.",
        fix=f"link or load {d.backend_id}'s runtime library on the device (then pass --backend "
        f"{d.backend_id}==VERSION), or export the program without {d.backend_id}",
    )


def _by_rules(d: DelegateFacts, spec: BackendSpec, rules: AcceptanceRules, runtime: str) -> Answer:
    assert spec.version is not None  # checked by predict
    rule = rules.runtime(spec.version)
    if rule is None:
        return Answer(
            d.where,
            UNKNOWN,
            f"{rules.source} declares the {d.backend_id} runtimes {', '.join(rules.versions())}, not {spec.version}",
        )
    state, why = rule.on_executorch(runtime)
    if state == UNKNOWN:
        return Answer(d.where, UNKNOWN, f"{why} ({rules.source})")
    if state == REFUSED:
        return Answer(
            d.where,
            REFUSED,
            f"{d.backend_id} runtime {spec.version} is {why} ({rules.source})",
            error=f"Failed to load method {d.plan}, error: 0x:23",
            fix=f"use an executorch release that runtime {spec.version} runs on ({rule.executorch or 'none declared'})",
        )
    j = judge_blob(d.blob, rules, rule, runtime)
    basis = (
        f"runtime {rule.version} reads header formats {rule.header_formats[0]}-{rule.header_formats[1]}, "
        f"blob formats {rule.formats()} ({rules.source}); the blob: "
        + (
            f"header format {d.header_format}, blob format {d.blob_format[0]}.{d.blob_format[1]}, written by "
            f"{d.written_by} with executorch {d.exported_with}"
            if d.blob_format
            else f"no contract header ({d.no_header})"
        )
    )
    if j.verdict == COMPATIBLE:
        return Answer(d.where, RUNS, basis)
    if j.verdict == REEXPORT_RECOMMENDED:
        return Answer(
            d.where,
            RUNS,
            basis + "; runs with a re-export recommendation",
            log=j.message,
            fix=_fix_of(j.message),
        )
    code = "30" if j.verdict == INCOMPATIBLE else "23"
    fix = _fix_of(j.message) or "export the program again (the blob is damaged or is not this backend's)"
    return Answer(
        d.where,
        REFUSED,
        basis,
        error=f"Failed to load method {d.plan}, error: 0x:{code}",
        log=j.message,
        fix=fix,
    )


def _by_measurement(d: DelegateFacts, runtime: str, measured: Measured) -> Answer:
    rt = measured.runtime(runtime)
    if rt is None:
        return Answer(
            d.where, UNKNOWN, f"executorch {runtime}, whose runtime holds {d.backend_id}, was not measured"
        )
    if d.foreign_format is None:
        return Answer(
            d.where,
            UNKNOWN,
            f"the blob's format cannot be told (no contract header: {d.no_header}), so no measurement stands for it",
        )
    formats = rt.builtin_backends.get(d.backend_id, {})
    entry = formats.get(d.foreign_format)
    if entry is None:
        return Answer(
            d.where,
            UNKNOWN,
            f"{d.backend_id} of executorch {runtime} was measured on blob formats "
            f"{', '.join(sorted(formats)) or 'none'}, not {d.foreign_format}",
        )
    basis = (
        f"{d.backend_id} of executorch {runtime} was measured on blobs of format {d.foreign_format} "
        f"({entry['cells']} grid cells, {rt.grid}): {entry['status']}"
    )
    if entry["status"] == RUNS:
        return Answer(d.where, RUNS, basis)
    if entry["status"] == REFUSED:
        return Answer(
            d.where,
            REFUSED,
            basis,
            error=entry["detail"],
            fix=f"export the program with executorch {runtime}",
        )
    return Answer(d.where, UNKNOWN, f"{basis} ({entry['detail']})")


def predict(
    program: str | Path | ProgramFacts,
    runtime: str,
    backends: Sequence[str | BackendSpec] = (),
    rules: Sequence[AcceptanceRules] = (),
    measured: Measured | None = None,
) -> Prediction:
    """The prediction for ``program`` on ExecuTorch ``runtime`` with the ``backends`` runtimes, from the
    backends' ``rules`` and the ``measured`` data (default: the shipped ``measured.json``).
    CompatInputError for bad input: a malformed version, a backend given twice, or one that neither
    ``rules`` nor the measured data describes."""
    runtime = parse_runtime(runtime)
    facts = program if isinstance(program, ProgramFacts) else read_program(program)
    measured = measured or load_measured()
    by_id = {r.backend_id: r for r in rules}
    builtin = measured.builtin_backend_ids()
    specs: dict[str, BackendSpec] = {}
    for spec in map(parse_backend, backends):
        if spec.backend_id in specs:
            raise CompatInputError(f"--backend {spec.backend_id} is given twice")
        if spec.backend_id in by_id:
            if spec.version is None:
                raise CompatInputError(
                    f"--backend {spec.backend_id}: give the version of its runtime on the device, "
                    f"{spec.backend_id}==VERSION (its rules declare {', '.join(by_id[spec.backend_id].versions())})"
                )
        elif spec.backend_id in builtin:
            if spec.version is not None and Version(spec.version) != Version(runtime):
                raise CompatInputError(
                    f"--backend {spec}: {spec.backend_id}'s runtime ships inside ExecuTorch, so its version is "
                    f"the runtime's ({runtime}); give {spec.backend_id} alone"
                )
        else:
            known = sorted(set(by_id) | builtin)
            raise CompatInputError(
                f"--backend {spec.backend_id}: no acceptance rules and no measurement describe this backend "
                f"(known: {', '.join(known) or 'none'}); install its vendor package (its descriptor declares "
                "acceptance rules) or give its rules file with --rules FILE"
            )
        specs[spec.backend_id] = spec
    answers = [_program_answer(facts, runtime, measured)]
    for d in facts.delegates:
        given = specs.get(d.backend_id)
        if given is None:
            answers.append(_not_registered(d))
        elif d.backend_id in by_id:
            answers.append(_by_rules(d, given, by_id[d.backend_id], runtime))
        else:
            answers.append(_by_measurement(d, runtime, measured))
    return Prediction(facts.path, runtime, tuple(specs.values()), tuple(answers))
