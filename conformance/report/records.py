"""The report typed (docs/report-schema.md): ``Report`` and its sections ``Backend``,
``RuntimeLibrary``, ``Result``, ``Options`` and ``OperatorRow``.

``Report.from_dict`` reads a report, raising ``ReportTypeError`` with one problem per field missing or of
the wrong type (the JSON Schema, conformance/schemas/report.schema.json); ``to_dict`` gives it back. Keys a
section does not know are kept (``extra``), so that a report read and written again is the same JSON,
and its content hash the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, cast

from conformance.report.rows import CarriedOver, ProfileRow, ResultRow
from conformance.report.schema import kind_of, structure_problems
from conformance.report.verdicts import profile_verdicts, verdict
from conformance.version import REPORT_SCHEMA, REPORT_SCHEMA_VERSION

#: The ``schema`` field of every report.
SCHEMA = REPORT_SCHEMA
#: The ``mode`` of a report.
MODES = ("certify", "standard")


def type_problems(report: dict[str, Any], schema_version: int | None = REPORT_SCHEMA_VERSION) -> list[str]:
    """'field X is Y, not Z' for each field of ``report`` (a dict) that is missing or of the wrong type:
    the report's JSON Schema (conformance/schemas/report.schema.json) as ``schema_version`` requires it."""
    return structure_problems(report, schema_version)


class ReportTypeError(ValueError):
    """A dict that is not a report of the schema: ``problems`` lists each field missing or of a wrong type."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _extra(data: Mapping[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in known}


def _absent(data: Mapping[str, Any], optional: tuple[str, ...]) -> frozenset[str]:
    return frozenset(k for k in optional if k not in data)


def json_fields(cls: type) -> tuple[str, ...]:
    """The JSON keys of a section's dataclass: its fields but ``extra`` (the keys this version does not
    know, kept as read) and ``absent`` (the optional keys the file did not have)."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.name not in ("extra", "absent"))


def _fields_from(cls: type, data: Mapping[str, Any], optional: tuple[str, ...] = ()) -> dict[str, Any]:
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
    """``results[]``: one check's outcome (``outcome`` is one of outcomes.OUTCOMES), typed; its JSON form,
    the row the suite's code passes around, is ``ResultRow`` (conformance/report/rows.py)."""

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
    carried_over: CarriedOver | None = None
    #: the check ran programs whose delegates the vendor's simulator computed (the report's ``simulator``;
    #: docs/contract.md, "Simulated runtimes"). The suite sets it only when true; a value read is written back.
    simulated: bool | None = None

    def to_dict(self) -> ResultRow:
        out = {k: getattr(self, k) for k in json_fields(Result) if k not in self.absent}
        if self.carried_over is None:
            out.pop("carried_over", None)
        if self.simulated is None:  # a report read with "simulated": false writes it back
            out.pop("simulated", None)
        # the keys of ResultRow (tests/certification/test_result_row.py), and the unknown ones read (extra)
        return cast(ResultRow, {**out, **self.extra})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Result:
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
    profiles: list[ProfileRow] | None = None
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

    def result_dicts(self) -> list[ResultRow]:
        return [r.to_dict() for r in self.results]

    def computed_verdict(self) -> tuple[str, list[str], list[str]]:
        """(verdict, reasons, warnings) that the results give (``verdict`` below)."""
        return verdict(self.result_dicts(), self.certify, self.backend.declared, self.interrupted is True)

    def computed_profiles(self) -> list[ProfileRow]:
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
