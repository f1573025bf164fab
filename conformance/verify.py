"""Re-checks a submitted report against what the suite version that wrote it
actually checks (conformance/released/), recomputes its verdict, and reads
report files defensively (size cap, UTF-8, JSON, types).

``verify`` is authoritative about content: the checks, clauses, levels,
titles and applies_if of every result must be those of the released suite
version that wrote the report, the summary must count the results, the
verdict must be the one the results give, and the suite version must be
released and inside its validity window. It cannot tell who wrote a report:
that is what a signature is for (conformance/attestation.py).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import semver

from conformance.outcomes import EXPECTED_FAILURE, MUST, NOT_APPLICABLE, OUTCOMES, PASSED
from conformance.report import content_hash, verdict
from conformance.version import REPORT_SCHEMA_VERSION, SUITE_VERSION, SUPPORTED_REPORT_SUITE_VERSIONS

#: verify and badge read at most this many bytes of a file.
MAX_READ_BYTES = 64 * 1024 * 1024

SCHEMA = "executorch-conformance-report"
MODES = ("certify", "standard")


class Unreadable(ValueError):
    """The file cannot be a report (too large, not UTF-8, not JSON, ...); the message says why."""


def read_json(path: str | Path, max_bytes: int = MAX_READ_BYTES) -> Any:
    """The JSON value in ``path``, read only if it is at most ``max_bytes`` long."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > max_bytes:
                raise Unreadable(f"is {_size(size)}, more than the {_size(max_bytes)} verify reads; not read")
            data = f.read(max_bytes + 1)  # a pipe or a growing file has no size worth trusting
    except IsADirectoryError:
        raise Unreadable("is a directory, not a file") from None
    except OSError as exc:
        raise Unreadable(f"cannot be read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise Unreadable(f"holds more than the {_size(max_bytes)} verify reads; not read further")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].lstrip().startswith("{") and lines[0].rstrip().endswith("}"):
        try:  # JSON Lines (an .intoto.jsonl file): one value per line
            values = [loads_strict(line) for line in lines]
        except _DuplicateKey as exc:
            raise Unreadable(f"is not JSON this tool reads: {exc}") from None
        except (ValueError, RecursionError):
            values = None
        if values is not None:
            if len(values) != 1:
                raise Unreadable(f"holds {len(values)} JSON lines; verify takes one report or one envelope")
            return values[0]
    try:
        return loads_strict(text)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:
        raise Unreadable(f"is not JSON this tool reads: {exc}") from None
    except RecursionError:
        raise Unreadable("is not JSON this tool reads: nested too deeply") from None


class _DuplicateKey(ValueError):
    pass


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = {}
    for key, value in pairs:
        if key in obj:  # parsers disagree on which one wins: refuse, do not pick
            raise _DuplicateKey(f"key {key!r} appears twice in one object")
        obj[key] = value
    return obj


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_strict(text: str | bytes) -> Any:
    """json.loads, refusing duplicate keys and NaN/Infinity (ValueError, RecursionError)."""
    return json.loads(text, object_pairs_hook=_object, parse_constant=_constant)


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"


# --------------------------------------------------------------------------- types


def _kind(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


class _Types:
    """Collects 'FIELD is X, not Y' problems."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def want(self, obj: dict, key: str, where: str, *kinds: str, required: bool = True) -> bool:
        path = f"{where}.{key}" if where else key
        if key not in obj:
            if required:
                self.problems.append(f"field {path!r} is missing")
            return False
        value = obj[key]
        if not any(_is(value, k) for k in kinds):
            self.problems.append(
                f"field {path!r} is {_kind(value)}, not {' or '.join(_NAMES[k] for k in kinds)}"
            )
            return False
        return True

    def want_list_of(self, obj: dict, key: str, where: str, item: str, required: bool = True) -> bool:
        if not self.want(obj, key, where, "list", required=required):
            return False
        path = f"{where}.{key}" if where else key
        for i, value in enumerate(obj[key]):
            if not _is(value, item):
                self.problems.append(f"field {path}[{i}] is {_kind(value)}, not {_NAMES[item]}")
                return False
        return True


_NAMES = {
    "str": "a string",
    "int": "an integer",
    "num": "a number",
    "bool": "a boolean",
    "dict": "an object",
    "list": "a list",
    "null": "null",
}


def _is(value: Any, kind: str) -> bool:
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "num":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "null":
        return value is None
    return isinstance(value, {"str": str, "bool": bool, "dict": dict, "list": list}[kind])


def _type_problems(report: dict[str, Any], schema_version: int) -> list[str]:
    t = _Types()
    for key in ("schema", "suite_version", "created", "command", "mode", "verdict", "content_sha256"):
        t.want(report, key, "", "str")
    t.want(report, "schema_version", "", "int")
    t.want(report, "certified", "", "bool")
    t.want(report, "duration_s", "", "num", required=False)
    t.want_list_of(report, "verdict_reasons", "", "str", required=False)
    t.want_list_of(report, "warnings", "", "str", required=False)
    if t.want(report, "environment", "", "dict"):
        for key in ("executorch", "torch", "python", "platform", "machine"):
            t.want(report["environment"], key, "environment", "str", "null", required=False)
    if t.want(report, "backend", "", "dict"):
        backend = report["backend"]
        for key in ("id", "distribution", "version"):
            t.want(backend, key, "backend", "str")
        t.want(backend, "installed_version", "backend", "str", "null", required=False)
        t.want_list_of(backend, "capabilities", "backend", "str", required=False)
        if t.want_list_of(backend, "runtime_libraries", "backend", "dict", required=schema_version >= 2):
            for i, lib in enumerate(backend["runtime_libraries"]):
                t.want(lib, "path", f"backend.runtime_libraries[{i}]", "str")
                t.want(lib, "sha256", f"backend.runtime_libraries[{i}]", "str", "null")
    if t.want(report, "summary", "", "dict"):
        for key, value in report["summary"].items():
            if key not in (*OUTCOMES, "total"):
                t.problems.append(f"field 'summary.{key}' is not an outcome or 'total'")
            elif not _is(value, "int"):
                t.problems.append(f"field 'summary.{key}' is {_kind(value)}, not an integer")
        if "total" not in report["summary"]:
            t.problems.append("field 'summary.total' is missing")
    if t.want_list_of(report, "results", "", "dict"):
        for i, r in enumerate(report["results"]):
            where = f"results[{i}]"
            for key in ("id", "clause", "level", "title", "outcome", "reason"):
                t.want(r, key, where, "str")
            t.want(r, "applies_if", where, "str", "null", required=schema_version >= 2)
            t.want(r, "duration_s", where, "num", "null", required=False)
    if schema_version >= 2:
        t.want_list_of(report, "selected", "", "str")
        if "interrupted" in report:
            t.want(report, "interrupted", "", "bool")
        if t.want(report, "options", "", "dict"):
            options = report["options"]
            t.want(options, "backend", "options", "str")
            t.want(options, "expectations", "options", "str", "null")
            t.want(options, "certify", "options", "bool")
            if "checks" in options and _is(options["checks"], "list"):
                t.want_list_of(options, "checks", "options", "str")
            else:
                t.want(options, "checks", "options", "str", "null")
            t.want(options, "timeout", "options", "num", "null")
            t.want(options, "workers", "options", "int")
    return t.problems


# --------------------------------------------------------------------------- the verification


@dataclasses.dataclass
class Verification:
    """What ``verify`` found out about one report."""

    problems: list[str]
    verdict: str | None = None  # recomputed from the results
    certify: bool = False
    counts: dict[str, int] = dataclasses.field(default_factory=dict)  # results by outcome, and "total"
    waived: int = 0  # expected failures and declared not-applicable MUST checks
    exempt: int = 0  # conditional checks whose capability the backend does not declare

    @property
    def ok(self) -> bool:
        return not self.problems

    def verdict_line(self) -> str:
        mode = "certify mode" if self.certify else "standard mode"
        parts = [
            f"{self.counts.get(o, 0)} {o.replace('_', ' ')}"
            for o in OUTCOMES
            if self.counts.get(o, 0) or o in ("passed", "failed")
        ]
        extra = "".join(
            f", {n} {what}" for n, what in ((self.waived, "waived"), (self.exempt, "exempt")) if n
        )
        return (
            f"{(self.verdict or '?').upper()} ({mode}): {self.counts.get(PASSED, 0)}/{self.counts.get('total', 0)} "
            f"passed{extra} ({', '.join(parts)})"
        )


def _today() -> datetime.date:
    return datetime.datetime.now(datetime.timezone.utc).date()


def supported_suite_version(version: str, spec: str = SUPPORTED_REPORT_SUITE_VERSIONS) -> bool:
    """Whether ``version`` satisfies every comparison in the comma-separated ``spec``."""
    parsed = semver.Version.parse(version)
    return all(parsed.match(part.strip()) for part in spec.split(","))


def is_exempt(result: dict[str, Any], capabilities) -> bool:
    """A conditional check that is not applicable because its capability is not declared."""
    condition = result.get("applies_if")
    return result.get("outcome") == NOT_APPLICABLE and bool(condition) and condition not in capabilities


def tally(results: list[dict[str, Any]], capabilities) -> tuple[dict[str, int], int, int]:
    """(counts by outcome with "total", waived, exempt) of well-formed results."""
    counts = Counter(r["outcome"] for r in results)
    exempt = sum(is_exempt(r, capabilities) for r in results)
    waived = counts[EXPECTED_FAILURE] + sum(
        r["outcome"] == NOT_APPLICABLE and r["level"] == MUST and not is_exempt(r, capabilities)
        for r in results
    )
    return {**{o: counts[o] for o in OUTCOMES}, "total": len(results)}, waived, exempt


def expand_checks(spec: str | list[str] | None, ids: list[str]) -> list[str]:
    """The ids a ``--checks`` value selects among ``ids`` (None: every check)."""
    if spec is None:
        return list(ids)
    parts = spec.split(",") if isinstance(spec, str) else spec
    wanted = {p.strip() for p in parts if p.strip()}
    return [i for i in ids if i in wanted or i.split("-")[0] in wanted]


def check_report(
    report: Any, *, today: datetime.date | None = None, released: dict | None = None
) -> Verification:
    """Verifies ``report`` (any JSON value) and recomputes its verdict."""
    from conformance.released import releases

    released = releases() if released is None else released
    today = today or _today()
    if not isinstance(report, dict):
        return Verification([f"holds a JSON {_kind(report).split()[-1]}, not a report object"])
    if report.get("schema") != SCHEMA:
        return Verification(
            [f"field 'schema' is {report.get('schema')!r}, not {SCHEMA!r}: not a conformance report"]
        )
    version = report.get("suite_version")
    release = released.get(version) if isinstance(version, str) else None
    schema_version = release.report_schema_version if release else REPORT_SCHEMA_VERSION
    problems = _type_problems(report, schema_version)
    if problems:
        return Verification(problems)

    if release is None:
        known = ", ".join(released) or "none"
        return Verification(
            [
                (
                    f"suite version {version!r} was never released (released versions: {known}); "
                    "a report must be written by a released executorch-conformance"
                )
            ]
        )
    if report["schema_version"] != release.report_schema_version:
        problems.append(
            f"schema_version is {report['schema_version']}, but suite {version} writes "
            f"schema_version {release.report_schema_version}"
        )
    actual = content_hash(report)
    if actual != report["content_sha256"]:
        problems.append(
            f"content hash mismatch: the report says {report['content_sha256'][:16]}…, its content hashes to "
            f"{actual[:16]}…; the report was edited after it was written"
        )
    problems += _window_problems(report["created"], release, today)
    if report["mode"] not in MODES:
        problems.append(f"mode is {report['mode']!r}, not 'certify' or 'standard'")
    certify = report["mode"] == "certify"
    capabilities = report["backend"].get("capabilities", [])
    for capability in capabilities:
        if capability not in release.capabilities:
            problems.append(
                f"backend.capabilities names {capability!r}, which no check of suite {version} "
                f"applies to (known: {', '.join(sorted(release.capabilities)) or 'none'})"
            )

    results = report["results"]
    problems += _result_problems(results, release)
    problems += _summary_problems(report["summary"], results)
    if schema_version >= 2:
        problems += _selection_problems(report, release, certify)
    if certify:
        missing = [i for i in release.check_ids if i not in {r["id"] for r in results}]
        if missing:
            problems.append(
                f"certify mode needs every check of suite {version}, but the report lacks "
                f"{', '.join(missing)}"
            )
        for r in results:
            # A certify run refuses expected failures before it starts: one in a certify report is forged.
            # (A MUST check that did not pass is a genuine outcome: the verdict says not conformant.)
            if r["outcome"] == EXPECTED_FAILURE:
                problems.append(
                    f"certify mode forbids expected failures, but {r['id']} is one ({r['reason']})"
                )

    outcomes_ok = all(r["outcome"] in OUTCOMES for r in results)
    result = Verification(problems, certify=certify)
    if outcomes_ok and results:
        interrupted = report.get("interrupted") is True
        expected, reasons, warnings = verdict(results, certify, capabilities, interrupted)
        result.verdict = expected
        result.counts, result.waived, result.exempt = tally(results, capabilities)
        if report["verdict"] != expected or report["certified"] != (expected == "certified"):
            problems.append(
                f"the report claims verdict {report['verdict']!r} (certified={report['certified']}), its results "
                f"give {expected!r}"
            )
        if version == SUITE_VERSION:  # the reasons' wording is this suite's
            for key, mine in (("verdict_reasons", reasons), ("warnings", warnings)):
                if key in report and report[key] != mine:
                    problems.append(
                        f"{key} differ from what the results give: the report says {report[key]!r}, "
                        f"the results give {mine!r}"
                    )
    return result


def _window_problems(created: str, release, today: datetime.date) -> list[str]:
    problems = []
    try:
        when = datetime.datetime.fromisoformat(created)
    except ValueError:
        return [f"created {created!r} is not an ISO 8601 time"]
    if when.tzinfo is None:
        return [f"created {created!r} has no time zone"]
    day = when.astimezone(datetime.timezone.utc).date()
    v = release.suite_version
    if day < release.released:
        problems.append(f"created {day}, before suite version {v} was released ({release.released})")
    if day > release.valid_until:
        problems.append(f"created {day}, after suite version {v} stopped being valid ({release.valid_until})")
    if day > today + datetime.timedelta(days=1):
        problems.append(f"created {day}, which is in the future (today is {today})")
    if today > release.valid_until:
        problems.append(
            f"suite version {v} was valid until {release.valid_until}; its reports have expired "
            f"(today is {today}): certify again with a current executorch-conformance"
        )
    return problems


def _result_problems(results: list[dict[str, Any]], release) -> list[str]:
    if not results:
        return ["results is empty: a report must hold the result of every check it ran"]
    problems = []
    v = release.suite_version
    for id_, n in Counter(r["id"] for r in results).items():
        if n > 1:
            problems.append(f"check {id_} appears {n} times in results")
    for i, r in enumerate(results):
        if r["outcome"] not in OUTCOMES:
            problems.append(
                f"results[{i}] ({r['id']}): unknown outcome {r['outcome']!r} (known: {', '.join(OUTCOMES)})"
            )
        released = release.checks.get(r["id"])
        if released is None:
            problems.append(f"results[{i}]: {r['id']!r} is not a check of suite {v}")
            continue
        for key in ("clause", "level", "title", "applies_if"):
            if r.get(key, released[key]) != released[key]:
                problems.append(
                    f"results[{i}] ({r['id']}): {key} is {r[key]!r}, but suite {v} has "
                    f"{released[key]!r} for {r['id']}"
                )
    order = [r["id"] for r in results if r["id"] in release.checks]
    if order != [i for i in release.check_ids if i in set(order)]:
        problems.append(f"results are not in check order (suite {v} runs {', '.join(release.check_ids)})")
    return problems


def _summary_problems(summary: dict[str, int], results: list[dict[str, Any]]) -> list[str]:
    problems = []
    counts = Counter(r["outcome"] for r in results)
    for outcome in OUTCOMES:
        if summary.get(outcome, 0) != counts[outcome]:
            problems.append(
                f"summary.{outcome} is {summary.get(outcome, 0)}, but {counts[outcome]} results are {outcome}"
            )
    if summary.get("total") != len(results):
        problems.append(f"summary.total is {summary.get('total')}, but the report has {len(results)} results")
    return problems


def _selection_problems(report: dict[str, Any], release, certify: bool) -> list[str]:
    problems = []
    selected, options = report["selected"], report["options"]
    ids = {r["id"] for r in report["results"]}
    for id_, n in Counter(selected).items():
        if n > 1:
            problems.append(f"selected lists {id_} {n} times")
    unknown = [s for s in selected if s not in release.checks]
    if unknown:
        problems.append(f"selected names {', '.join(unknown)}, not checks of suite {release.suite_version}")
    lost = [s for s in selected if s not in ids]
    if lost:
        problems.append(f"selected {', '.join(lost)}, but the results lack them")
    extra = [r["id"] for r in report["results"] if r["id"] not in selected]
    if extra:
        problems.append(f"results hold {', '.join(extra)}, which the run did not select")
    if options["certify"] != certify:
        problems.append(f"options.certify is {options['certify']} but mode is {report['mode']!r}")
    if certify and options["checks"] is not None:
        problems.append(f"certify mode runs every check, but options.checks is {options['checks']!r}")
    if options["workers"] < 1:
        problems.append(f"options.workers is {options['workers']}")
    wanted = expand_checks(options["checks"], release.check_ids)
    desc = "null (every check)" if options["checks"] is None else repr(options["checks"])
    not_selected = [i for i in wanted if i not in selected]
    if not_selected:
        problems.append(f"options.checks {desc} selects {', '.join(not_selected)}, which selected lacks")
    not_wanted = [i for i in selected if i in release.checks and i not in wanted]
    if not_wanted:
        problems.append(
            f"selected holds {', '.join(not_wanted)}, which options.checks {desc} does not select"
        )
    return problems


# --------------------------------------------------------------------------- compatibility helpers


def verify_report(report: Any, *, today: datetime.date | None = None) -> list[str]:
    """Problems found in ``report``; an empty list means it verifies."""
    return check_report(report, today=today).problems


def verify_file(path: str | Path) -> list[str]:
    """Problems found in the report in ``path`` (a plain report; see certification_cli for envelopes)."""
    try:
        report = read_json(path)
    except Unreadable as exc:
        return [f"{path} {exc}"]
    return verify_report(report)
