"""The JSON report of a run (schema: docs/report-schema.md), typed, and its content hash.

``Report`` is the report as the plugin builds it (``build_report``) and
``write_report`` writes it, and as ``verify`` reads it back
(``Report.from_dict``: a dict of the wrong shape raises ReportTypeError with
one problem per field). ``Report.computed_verdict`` is the verdict its results
give (``verdict``), ``Report.computed_profiles`` the verdict of each profile
(``profile_verdicts``, the same rule over each profile's results). Reading and writing again gives the same bytes.

The hash is a SHA-256 over the canonical JSON of the report without the hash
field. It detects edits, it does not prove who ran the suite.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
from pathlib import Path
from typing import Any, ClassVar

from conformance.input_files import NotARegularFile, open_regular
from conformance.outcomes import BAD, FAILED, MUST, NOT_APPLICABLE, OUTCOMES, PASSED
from conformance.profiles import NOT_CLAIMED, PROFILES
from conformance.registry import exempt
from conformance.results.report_schema import kind_of, structure_problems
from conformance.version import REPORT_SCHEMA, REPORT_SCHEMA_VERSION

#: The ``schema`` field of every report.
SCHEMA = REPORT_SCHEMA
#: The ``mode`` of a report.
MODES = ("certify", "standard")


def canonical_bytes(report: dict[str, Any]) -> bytes:
    body = {k: v for k, v in report.items() if k != "content_sha256"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def content_hash(report: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_bytes(report)).hexdigest()


def json_numbers(value: Any) -> Any:
    """``value`` with every infinite or NaN float replaced by None: JSON has neither, and ``verify`` reads a
    report as strict JSON. A row that records a non-finite error (an output that is NaN where eager
    PyTorch's is not) says so in its reason."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_numbers(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_numbers(v) for v in value]
    return value


def seal(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with its content_sha256 filled in."""
    sealed = dict(report)
    sealed["content_sha256"] = content_hash(sealed)
    return sealed


#: file_sha256 hashes at most this many bytes (a wheel or runtime library larger than this is refused).
MAX_HASH_BYTES = 4 << 30


def file_sha256(path: str | Path, max_bytes: int = MAX_HASH_BYTES) -> str:
    """The SHA-256 of a regular file of at most ``max_bytes`` (OSError otherwise, naming why)."""
    digest = hashlib.sha256()
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise NotARegularFile(f"{path} is {size} bytes, more than the {max_bytes} this tool hashes")
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


#: Why a MUST check that passed only simulated does not certify (docs/contract.md, "Simulated runtimes").
SIMULATED_ONLY_REASON = (
    "its programs ran with the backend's delegates in the vendor's simulator, and a simulated pass does not "
    'certify (docs/contract.md, "Simulated runtimes")'
)


def verdict(
    results: list[dict[str, Any]],
    certify: bool,
    capabilities: list[str] | tuple[str, ...] = (),
    interrupted: bool = False,
) -> tuple[str, list[str], list[str]]:
    """('certified' | 'conformant' | 'not conformant', reasons, warnings).

    MUST checks decide the verdict: any failure, error, crash, timeout, check
    that did not run or unexpected pass makes the backend not conformant, and in
    certify mode so does a MUST check that passed only simulated (``simulated``)
    or did not pass, except a conditional
    one (``applies_if``) whose capability the backend does not declare. An
    interrupted run or one with no results is never conformant. SHOULD checks
    that do not pass are warnings, and so are MUST failures a previous claim
    carries over (``carried_over``, conformance/certification/carry_over.py). Checks failed by one cause (the same reason)
    are named together in one reason.
    """
    causes: dict[tuple[str, str], list[str]] = {}
    warnings = []
    for r in results:
        bad = r["outcome"] in BAD
        carried = r.get("carried_over")
        if bad and carried and r["outcome"] == FAILED and r["level"] == MUST:
            warnings.append(
                f"{r['id']} failed, carried over from suite {carried['from']} ({carried['what']}; "
                f"{carried['change']} in {carried['since']}, a failure from suite {carried['failure_from']}): "
                f"{r['reason']}"
            )
            continue
        if r["level"] != MUST:
            if bad:
                warnings.append(f"{r['id']} ({r['level']}) {r['outcome']}: {r['reason']}")
            continue
        if bad:
            cause = (r["outcome"].replace("_", " "), _cause(r["reason"]))
        elif certify and r["outcome"] == PASSED and r.get("simulated") is True:
            cause = ("passed only simulated", SIMULATED_ONLY_REASON)
        elif certify and r["outcome"] == NOT_APPLICABLE and _exempt(r, capabilities):
            continue
        elif certify and r["outcome"] != PASSED:
            cause = (f"mandatory but {r['outcome'].replace('_', ' ')}", r["reason"])
        else:
            continue
        causes.setdefault(cause, []).append(r["id"])
    reasons = []
    if interrupted:
        reasons.append("the run was interrupted: a partial run is never conformant")
    if not results:
        reasons.append("the report holds no results")
    by_id = {r["id"]: r["reason"] for r in results}
    for (outcome, shared), ids in causes.items():
        if len(ids) == 1:
            reasons.append(f"{ids[0]} {outcome}: {by_id[ids[0]]}")
        else:
            reasons.append(f"{len(ids)} checks {outcome} for one cause ({', '.join(ids)}): {shared}")
    if reasons:
        return "not conformant", reasons, warnings
    return ("certified" if certify else "conformant"), [], warnings


#: The note the Context adds when a remembered failure is met again by another check (anchored at the end:
#: matched once, with ``match`` at a known position, never searched for).
_FIRST_SEEN = re.compile(r" \(found while running [A-Z]+-\d+\)")
#: What follows the "()" of the vendor's code named as what raised: "make_partitioners() raised ...",
#: "make() of sample model 'x' raised ..."; tried with ``match`` at each "()", never searched for.
_RAISED_AFTER_CALL = re.compile(r"(?: of sample model '[^']*')? raised \w")


def _cause(reason: str) -> str:
    """What a failure comes down to, so that checks failed by the same vendor error are grouped: from the
    first ``NAME() raised WORD...`` (``NAME() of sample model '...' raised ...``) on the last line to the
    end, without the "(found while running ID)" note.

    Linear in ``len(reason)`` (a report's reasons are the forger's and may be megabytes long): a searched
    pattern of the form ``\\S+\\(\\)...`` backtracks quadratically over a long run without spaces.
    """
    start = reason.rfind(" (found while running ")
    note = _FIRST_SEEN.match(reason, start) if start >= 0 else None
    if note and reason[note.end() :] in ("", "\n"):
        reason = reason[:start] + reason[note.end() :]
    body = reason.removesuffix("\n")
    last_break = body.rfind("\n")  # what follows "raised" runs to the end with no line break
    call = reason.find("()", 0)
    while call >= 0:
        after = _RAISED_AFTER_CALL.match(reason, call + 2)
        if call > 0 and not reason[call - 1].isspace() and after and after.end() > last_break:
            name = call - 1
            while name > 0 and not reason[name - 1].isspace():
                name -= 1
            return body[name:]
        call = reason.find("()", call + 1)
    return reason


def _exempt(result: dict[str, Any], capabilities) -> bool:
    return exempt(result.get("applies_if"), capabilities)


def profile_verdicts(
    results: list[dict[str, Any]],
    certify: bool,
    capabilities: list[str] | tuple[str, ...] = (),
    interrupted: bool = False,
) -> list[dict[str, Any]]:
    """One entry per profile (conformance/profiles.py) with a result among ``results``, in table order:
    ``id``, ``name``, ``checks`` (the ids of its results), ``verdict`` and ``reasons``.

    The verdict is ``verdict`` above applied to the profile's results alone, so a profile is certified
    (conformant) exactly when the report would be if it held only these results. A profile whose every
    result is a conditional check of a capability the backend does not declare is "not claimed", its
    reason naming the capabilities. A profile none of whose checks was selected has no entry.
    """
    entries = []
    for profile in PROFILES:
        mine = [r for r in results if profile.covers(r["id"])]
        if not mine:
            continue
        if all(_exempt(r, capabilities) for r in mine):
            absent = sorted({str(r["applies_if"]) for r in mine})
            text = NOT_CLAIMED
            reasons = [f"the backend does not declare {' or '.join(absent)}"]
        else:
            text, reasons, _ = verdict(mine, certify, capabilities, interrupted)
        entries.append(
            {
                "id": profile.id,
                "name": profile.name,
                "checks": [r["id"] for r in mine],
                "verdict": text,
                "reasons": reasons,
            }
        )
    return entries


def summarize(results: list[dict[str, Any]]) -> dict[str, int]:
    """Count of each outcome, and the total."""
    summary = {o: sum(r["outcome"] == o for r in results) for o in OUTCOMES}
    summary["total"] = len(results)
    return summary


# --------------------------------------------------------------------------- the typed report


def type_problems(report: dict[str, Any], schema_version: int | None = REPORT_SCHEMA_VERSION) -> list[str]:
    """'field X is Y, not Z' for each field of ``report`` (a dict) that is missing or of the wrong type:
    the report's JSON Schema (conformance/schemas/report.schema.json) as ``schema_version`` requires it."""
    return structure_problems(report, schema_version)


class ReportTypeError(ValueError):
    """A dict that is not a report of the schema: ``problems`` lists each field missing or of a wrong type."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _extra(data: dict[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in known}


def _absent(data: dict[str, Any], optional: tuple[str, ...]) -> frozenset[str]:
    return frozenset(k for k in optional if k not in data)


def json_fields(cls: type) -> tuple[str, ...]:
    """The JSON keys of a section's dataclass: its fields but ``extra`` (the keys this version does not
    know, kept as read) and ``absent`` (the optional keys the file did not have)."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.name not in ("extra", "absent"))


def _fields_from(cls: type, data: dict[str, Any], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """The keyword arguments of ``cls`` read from ``data``: each field from its key (an ``optional`` one
    None where missing; a missing required one is a KeyError), the unknown keys as ``extra``."""
    names = json_fields(cls)
    return {
        **{k: data.get(k) if k in optional else data[k] for k in names},
        "extra": _extra(data, names),
    }


@dataclasses.dataclass
class RuntimeLibrary:
    """``backend.runtime_libraries[]``: a file the descriptor names and its SHA-256 (None, with ``error``,
    when it could not be read)."""

    path: str | None
    sha256: str | None
    error: str | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "sha256": self.sha256}
        if self.error is not None:
            out["error"] = self.error
        return {**out, **self.extra}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RuntimeLibrary:
        return cls(**_fields_from(cls, d, ("error",)))


@dataclasses.dataclass
class Backend:
    """``backend``: what was tested."""

    id: str
    distribution: str
    version: str
    installed_version: str | None = None
    capabilities: list[str] | None = None  # None: absent (read as [])
    runtime_libraries: list[RuntimeLibrary] | None = None  # None: absent (schema 1)
    #: how the declaration lets results differ from eager PyTorch (OperatorSupport.deviations); None: none
    declared_deviations: list[str] | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: optional keys that may be null and were absent from the file read
    absent: frozenset[str] = frozenset()

    @property
    def declared(self) -> list[str]:
        """The declared capabilities ([] when the field is absent)."""
        return list(self.capabilities or [])

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "distribution": self.distribution, "version": self.version}
        if "installed_version" not in self.absent:
            out["installed_version"] = self.installed_version
        if self.capabilities is not None:
            out["capabilities"] = list(self.capabilities)
        if self.runtime_libraries is not None:
            out["runtime_libraries"] = [lib.to_dict() for lib in self.runtime_libraries]
        if self.declared_deviations is not None:
            out["declared_deviations"] = list(self.declared_deviations)
        return {**out, **self.extra}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Backend:
        fields = _fields_from(
            cls, d, ("installed_version", "capabilities", "runtime_libraries", "declared_deviations")
        )
        if fields["runtime_libraries"] is not None:
            fields["runtime_libraries"] = [RuntimeLibrary.from_dict(x) for x in fields["runtime_libraries"]]
        return cls(**fields, absent=_absent(d, ("installed_version",)))


@dataclasses.dataclass
class Result:
    """``results[]``: one check's outcome (``outcome`` is one of outcomes.OUTCOMES)."""

    id: str
    clause: str
    level: str
    title: str
    applies_if: str | None
    outcome: str
    reason: str
    duration_s: float | None = None
    #: of duration_s, the shared setup this check did first and later checks reuse (from suite 0.5.0)
    shared_s: float | None = None
    #: the seconds the check's vendor-process tasks spent loading programs (the runtime's init()), executing
    #: them, and exporting and lowering (from suite 0.6.0; conformance/vendor/step_times.py)
    init_s: float | None = None
    execute_s: float | None = None
    lowering_s: float | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    absent: frozenset[str] = frozenset()
    #: a failure a previous claim carries over (from suite 0.6.0; conformance/certification/carry_over.py):
    #: from, change, since, failure_from, what. Written only when set.
    carried_over: dict[str, str] | None = None
    #: the check ran programs whose delegates the vendor's simulator computed (the report's ``simulator``;
    #: docs/contract.md, "Simulated runtimes"). Written only when true.
    simulated: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in json_fields(Result) if k not in self.absent}
        if self.carried_over is None:
            out.pop("carried_over", None)
        if not self.simulated:
            out.pop("simulated", None)
        return {**out, **self.extra}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Result:
        optional = (
            "applies_if",
            "duration_s",
            "shared_s",
            "init_s",
            "execute_s",
            "lowering_s",
            "carried_over",
            "simulated",
        )
        return cls(**_fields_from(cls, d, optional), absent=_absent(d, optional))


@dataclasses.dataclass
class Options:
    """``options``: what the run was given (``verify --rerun`` re-runs with it)."""

    backend: str
    expectations: str | None
    certify: bool
    checks: str | list[str] | None
    timeout: float | None
    workers: int
    target: str | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in json_fields(Options) if k != "target"}
        if self.target is not None:
            out["target"] = self.target
        return {**out, **self.extra}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Options:
        return cls(**_fields_from(cls, d, ("target",)))


@dataclasses.dataclass
class OperatorRow:
    """``operators[]``: one declared operator and dtype, as the OPS checks found it."""

    op: str
    dtype: str
    cases: int
    excluded: int
    delegated: int
    ran: int
    passed: int
    worst_error: float | None
    tolerance_used: float | None
    first_failing: dict[str, str] | None
    #: one row per case (conformance/operators/case_outcomes.py); None: absent (schema 2)
    case_results: list[dict[str, Any]] | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    absent: frozenset[str] = frozenset()

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in json_fields(OperatorRow) if k not in self.absent}
        return {**out, **self.extra}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OperatorRow:
        optional = ("case_results",)
        return cls(**_fields_from(cls, d, optional), absent=_absent(d, optional))


@dataclasses.dataclass
class Report:
    """A report (docs/report-schema.md), typed. ``to_dict`` gives the JSON object the suite writes (sealed
    when ``content_sha256`` is set); ``from_dict`` reads one, raising ReportTypeError with every field that
    is missing or of the wrong type. Keys it does not know are kept (``extra``), so that a report read and
    written again is the same JSON, and its content hash the same."""

    suite_version: str
    created: str
    command: str
    mode: str
    environment: dict[str, Any]
    backend: Backend
    results: list[Result]
    summary: dict[str, int]
    verdict: str
    certified: bool
    schema: str = SCHEMA
    schema_version: int = REPORT_SCHEMA_VERSION
    selected: list[str] | None = None  # None: absent (schema 1)
    options: Options | None = None  # None: absent (schema 1)
    interrupted: bool | None = None
    verdict_reasons: list[str] | None = None
    warnings: list[str] | None = None
    duration_s: float | None = None
    operators: list[OperatorRow] | None = None
    target: dict[str, Any] | None = None
    models: list[dict[str, Any]] | None = None  # report-only (docs/models.md)
    #: the deprecation warnings the run met (docs/api-stability.md); None: none met, or a report before 0.5.0
    deprecations: list[str] | None = None
    content_sha256: str | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: the verdict of each profile (``profile_verdicts``); None: a report before 0.6.0 (computed from results).
    #: Last, so that a Report built with positional arguments keeps working (docs/api-stability.md).
    profiles: list[dict[str, Any]] | None = None
    #: the claim of ``--previous-report`` (conformance/certification/carry_over.py), from suite 0.6.0
    previous_report: dict[str, Any] | None = None
    #: the vendor's simulator that computed the backend's delegates in the runtime checks (backend_id,
    #: simulator: 'module:qualname'); None: a real runtime, or none (docs/contract.md, "Simulated runtimes")
    simulator: dict[str, Any] | None = None

    #: the fields written only when set (null is not a value any of them takes)
    OPTIONAL: ClassVar[tuple[str, ...]] = (
        "selected",
        "interrupted",
        "verdict_reasons",
        "warnings",
        "duration_s",
        "target",
        "models",
        "deprecations",
        "profiles",
        "previous_report",
        "content_sha256",
        "simulator",
    )

    @property
    def certify(self) -> bool:
        return self.mode == "certify"

    def result_dicts(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.results]

    def computed_verdict(self) -> tuple[str, list[str], list[str]]:
        """(verdict, reasons, warnings) that the results give (``verdict`` below)."""
        return verdict(self.result_dicts(), self.certify, self.backend.declared, self.interrupted is True)

    def computed_profiles(self) -> list[dict[str, Any]]:
        """The profile verdicts that the results give (``profile_verdicts``), whatever ``profiles`` says."""
        return profile_verdicts(
            self.result_dicts(), self.certify, self.backend.declared, self.interrupted is True
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": self.schema,
            "schema_version": self.schema_version,
            "suite_version": self.suite_version,
            "created": self.created,
            "command": self.command,
            "mode": self.mode,
            "environment": dict(self.environment),
            "backend": self.backend.to_dict(),
            "results": self.result_dicts(),
            "summary": dict(self.summary),
            "verdict": self.verdict,
            "certified": self.certified,
        }
        if self.options is not None:
            out["options"] = self.options.to_dict()
        if self.operators is not None:
            out["operators"] = [row.to_dict() for row in self.operators]
        for key in self.OPTIONAL:
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return {**out, **self.extra}

    @classmethod
    def from_dict(cls, d: Any, schema_version: int | None = None) -> Report:
        """The report in ``d``, its types checked as ``schema_version`` (default: the one ``d`` names,
        else this suite's) requires them; ReportTypeError lists what is wrong."""
        if not isinstance(d, dict):
            raise ReportTypeError([f"holds a JSON {kind_of(d).split()[-1]}, not a report object"])
        if schema_version is None:
            named = d.get("schema_version")
            is_int = isinstance(named, int) and not isinstance(named, bool)
            schema_version = named if is_int else REPORT_SCHEMA_VERSION
        problems = type_problems(d, schema_version)
        if problems:
            raise ReportTypeError(problems)
        return cls(
            schema=d["schema"],
            schema_version=d["schema_version"],
            suite_version=d["suite_version"],
            created=d["created"],
            command=d["command"],
            mode=d["mode"],
            environment=d["environment"],
            backend=Backend.from_dict(d["backend"]),
            results=[Result.from_dict(r) for r in d["results"]],
            summary=d["summary"],
            verdict=d["verdict"],
            certified=d["certified"],
            options=Options.from_dict(d["options"]) if "options" in d else None,
            operators=[OperatorRow.from_dict(o) for o in d["operators"]] if "operators" in d else None,
            **{k: d.get(k) for k in cls.OPTIONAL},
            extra=_extra(d, json_fields(cls)),
        )


def _version_of(dist: str) -> str | None:
    import importlib.metadata as md

    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def _vendor_version_of(dist: str) -> str | None:
    """The version of distribution ``dist`` where the vendor's interpreter finds it (with ``run
    --vendor-python`` another environment than this one's), None if not installed there."""
    import importlib.metadata as md

    from conformance.judge.judge_environment import vendor_import_path

    for found in md.distributions(name=dist, path=vendor_import_path()):
        return found.version
    return None


def _vendor_python() -> dict[str, Any] | None:
    """What ran the vendor side (``run --vendor-python``): path, executable, python, executorch and torch
    versions; None when the vendor processes ran this environment's interpreter."""
    from conformance.vendor import vendor_interpreter

    interpreter = vendor_interpreter.current()
    return None if interpreter is None else interpreter.record()


def runtime_libraries(descriptor: Any) -> list[dict[str, Any]]:
    """Path and sha256 of each runtime library the descriptor names; an error is recorded, not raised."""
    from conformance.descriptor import raised

    try:
        paths = [str(p) for p in descriptor.runtime_libraries()]
    except Exception as exc:  # noqa: BLE001  what the vendor's code raised (recorded in the vendor process)
        return [{"path": None, "sha256": None, "error": f"runtime_libraries() raised {raised(exc)}"}]
    libraries: list[dict[str, Any]] = []
    for path in paths:
        try:
            libraries.append({"path": path, "sha256": file_sha256(path)})
        except OSError as exc:
            libraries.append(
                {"path": path, "sha256": None, "error": f"{type(exc).__name__}: {exc.strerror or exc}"}
            )
    return libraries


def build_report(
    *,
    descriptor: Any,
    results: list[dict[str, Any]],
    certify: bool,
    interrupted: bool,
    selected: list[str],
    options: dict[str, Any],
    command: str | None,
    duration_s: float,
    operators: list[dict[str, Any]] | None = None,
    target: dict[str, Any] | None = None,
    models: list[dict[str, Any]] | None = None,
    previous_report: dict[str, Any] | None = None,
    simulator: dict[str, Any] | None = None,
) -> Report:
    """The report of a run (docs/report-schema.md), without its content hash. ``operators``: the rows of
    the OPS checks (one per operator and dtype), reported as the ``operators`` section when given.
    ``target``: where the runtime checks ran (--target: its URL, uname, runner version, the sha256 of the
    runner's libraries there), reported as the ``target`` section when given. ``models``: the rows of the
    model tier (``--et-models``), reported as the ``models`` section when given; they never change the
    verdict. ``previous_report``: the claim that ``results`` carried over (``Claim.to_dict``). ``simulator``:
    the vendor's simulator that computed the delegates, reported as the ``simulator`` section when given."""
    import datetime
    import platform
    import shlex
    import sys

    from conformance.version import REPORT_SCHEMA_VERSION, SUITE_VERSION

    capabilities = descriptor.capabilities()
    verdict_text, reasons, warnings = verdict(results, certify, capabilities, interrupted)
    return Report(
        schema=SCHEMA,
        schema_version=REPORT_SCHEMA_VERSION,
        suite_version=SUITE_VERSION,
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        command=command or shlex.join(sys.argv),
        mode="certify" if certify else "standard",
        options=Options.from_dict(options),
        environment={
            "executorch": _version_of("executorch"),
            "torch": _version_of("torch"),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "machine": platform.machine(),
            "vendor_python": _vendor_python(),
        },
        backend=Backend(
            id=descriptor.backend_id,
            distribution=descriptor.distribution,
            version=descriptor.version,
            installed_version=_vendor_version_of(descriptor.distribution),
            capabilities=capabilities,
            runtime_libraries=[RuntimeLibrary.from_dict(lib) for lib in runtime_libraries(descriptor)],
            declared_deviations=descriptor.operators.deviations() or None,
        ),
        selected=list(selected),
        results=[Result.from_dict(r) for r in results],
        summary=summarize(results),
        interrupted=interrupted,
        verdict=verdict_text,
        verdict_reasons=reasons,
        warnings=warnings,
        certified=verdict_text == "certified",
        duration_s=round(duration_s, 1),
        operators=None if operators is None else [OperatorRow.from_dict(row) for row in operators],
        target=target,
        models=models,
        deprecations=list(descriptor.deprecations()) or None,
        profiles=profile_verdicts(results, certify, capabilities, interrupted),
        previous_report=previous_report,
        simulator=simulator,
    )


def write_report(report: Report | dict[str, Any], path: str | Path) -> dict[str, Any]:
    """Seals ``report`` (its numbers made JSON's: ``json_numbers``) and writes it to ``path`` (sorted keys,
    an indent of 2, a final newline); the sealed JSON object."""
    sealed = seal(json_numbers(report.to_dict() if isinstance(report, Report) else report))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(sealed, indent=2, sort_keys=True, allow_nan=False) + "\n")
    return sealed
