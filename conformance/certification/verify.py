"""Re-checks a submitted report against what the suite version that wrote it
actually checks (conformance/released/), recomputes its verdict, and reads
report files defensively (size cap, UTF-8, JSON, types).

``verify`` is authoritative about content: the checks, clauses, levels,
titles and applies_if of every result must be those of the released suite
version that wrote the report, the summary must count the results, the
verdict must be the one the results give, so must each profile's verdict
(``profiles``; recomputed from the results for a report before suite 0.6.0,
which has none), and the suite version must be released and inside its
validity window. It cannot tell who wrote a report:
that is what a signature is for (conformance/certification/attestation.py).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from conformance.descriptor import CAPABILITY_ABSENT
from conformance.input_files import NotARegularFile, open_regular
from conformance.outcomes import (
    EXPECTED_FAILURE,
    FAILED,
    MUST,
    NOT_APPLICABLE,
    OUTCOMES,
    PASSED,
    UNEXPECTED_PASS,
)
from conformance.profiles import certified_profiles
from conformance.registry import exempt, selects
from conformance.report import (
    MODES,
    SCHEMA,
    Report,
    ReportTypeError,
    content_hash,
)
from conformance.results.report_schema import kind_of
from conformance.version import REPORT_SCHEMA_VERSION

#: verify and badge read at most this many bytes of a file.
MAX_READ_BYTES = 64 * 1024 * 1024


class Unreadable(ValueError):
    """The file cannot be a report (too large, not UTF-8, not JSON, ...); the message says why."""


def read_json(path: str | Path, max_bytes: int = MAX_READ_BYTES) -> Any:
    """The JSON value in ``path``, read only if it is at most ``max_bytes`` long."""
    try:
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            if size > max_bytes:
                raise Unreadable(f"is {_size(size)}, more than the {_size(max_bytes)} verify reads; not read")
            data = f.read(max_bytes + 1)  # a pipe or a growing file has no size worth trusting
    except NotARegularFile as exc:
        raise Unreadable(str(exc).removeprefix(f"{path} ")) from None
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


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses as inf, which JSON cannot hold
        raise ValueError(f"the number {text[:40]} is too large for a double")
    return value


def loads_strict(text: str | bytes) -> Any:
    """json.loads, refusing duplicate keys, NaN/Infinity and numbers that overflow to infinity
    (ValueError, RecursionError)."""
    return json.loads(text, object_pairs_hook=_object, parse_constant=_constant, parse_float=_finite)


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"


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
    #: the verdict of each profile, recomputed from the results (conformance.report.profile_verdicts)
    profiles: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def profiles_line(self) -> str:
        """Each profile's verdict, then what the report certifies: ``Core certified, Named data not
        claimed; certifies Core``."""
        verdicts = ", ".join(f"{p['name']} {p['verdict']}" for p in self.profiles) or "none"
        certified = certified_profiles(self.profiles)
        return f"{verdicts}; certifies {' + '.join(certified) if certified else 'no profile'}"

    def verdict_line(self) -> str:
        mode = "certify mode" if self.certify else "standard mode"
        parts = [
            f"{self.counts.get(o, 0)} {o.replace('_', ' ')}"
            for o in OUTCOMES
            if self.counts.get(o, 0) or o in ("passed", "failed")
        ]
        return (
            f"{(self.verdict or '?').upper()} ({mode}): {counts_phrase(self.counts, self.waived, self.exempt)} "
            f"({', '.join(parts)})"
        )


def _today() -> datetime.date:
    return datetime.datetime.now(datetime.timezone.utc).date()


def is_exempt(result: dict[str, Any], capabilities) -> bool:
    """A conditional check that is not applicable because its capability is not declared."""
    return result.get("outcome") == NOT_APPLICABLE and exempt(result.get("applies_if"), capabilities)


def tally(results: list[dict[str, Any]], capabilities) -> tuple[dict[str, int], int, int]:
    """(counts by outcome with "total", waived, exempt) of well-formed results."""
    counts = Counter(r["outcome"] for r in results)
    exempt = sum(is_exempt(r, capabilities) for r in results)
    waived = counts[EXPECTED_FAILURE] + sum(
        r["outcome"] == NOT_APPLICABLE and r["level"] == MUST and not is_exempt(r, capabilities)
        for r in results
    )
    return {**{o: counts[o] for o in OUTCOMES}, "total": len(results)}, waived, exempt


def counts_phrase(counts: dict[str, int], waived: int, exempt: int) -> str:
    """``36/45 passed, 3 waived, 6 exempt`` from ``tally``'s figures: the words the verdict line of
    ``verify`` and the badge both use."""
    extra = "".join(f", {n} {what}" for n, what in ((waived, "waived"), (exempt, "exempt")) if n)
    return f"{counts.get(PASSED, 0)}/{counts.get('total', 0)} passed{extra}"


def expand_checks(spec: str | list[str] | None, ids: list[str]) -> list[str]:
    """The ids a ``--checks`` value selects among ``ids`` (None: every check)."""
    if spec is None:
        return list(ids)
    parts = spec.split(",") if isinstance(spec, str) else spec
    wanted = {p.strip() for p in parts if p.strip()}
    return [i for i in ids if selects(wanted, i)]


def check_report(
    report: Any, *, today: datetime.date | None = None, released: dict | None = None
) -> Verification:
    """Verifies ``report`` (any JSON value) and recomputes its verdict."""
    from conformance.released import releases

    released = releases() if released is None else released
    judged_on_another_day = today is not None and today != _today()
    today = today or _today()
    if not isinstance(report, dict):
        return Verification([f"holds a JSON {kind_of(report).split()[-1]}, not a report object"])
    if report.get("schema") != SCHEMA:
        return Verification(
            [f"field 'schema' is {report.get('schema')!r}, not {SCHEMA!r}: not a conformance report"]
        )
    version = report.get("suite_version")
    release = released.get(version) if isinstance(version, str) else None
    schema_version = release.report_schema_version if release else REPORT_SCHEMA_VERSION
    try:
        parsed = Report.from_dict(report, schema_version)
    except ReportTypeError as exc:
        return Verification(exc.problems)
    problems: list[str] = []

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
    if parsed.schema_version != release.report_schema_version:
        problems.append(
            f"schema_version is {parsed.schema_version}, but suite {version} writes "
            f"schema_version {release.report_schema_version}"
        )
    actual = content_hash(report)  # of the object read: every field, known or not
    if actual != parsed.content_sha256:
        problems.append(
            f"content hash mismatch: the report says {str(parsed.content_sha256)[:16]}…, its content hashes to "
            f"{actual[:16]}…; the report was edited after it was written"
        )
    problems += _window_problems(parsed.created, release, today, judged_on_another_day)
    if parsed.mode not in MODES:
        problems.append(f"mode is {parsed.mode!r}, not 'certify' or 'standard'")
    certify = parsed.certify
    capabilities = parsed.backend.declared
    for capability in capabilities:
        if capability not in release.capabilities:
            problems.append(
                f"backend.capabilities names {capability!r}, which no check of suite {version} "
                f"applies to (known: {', '.join(sorted(release.capabilities)) or 'none'})"
            )

    results = parsed.result_dicts()
    problems += _result_problems(results, release)
    problems += _summary_problems(parsed.summary, results)
    problems += _applicability_problems(report, release, capabilities)
    problems += _operator_problems(report, release)
    problems += _carry_over_problems(parsed, released)
    if schema_version >= 2:
        problems += _selection_problems(report, release, certify)
        problems += _target_problems(report)
    problems += _simulator_problems(report, results)
    if certify:
        missing = [i for i in release.check_ids if i not in {r["id"] for r in results}]
        if missing:
            problems.append(
                f"certify mode needs every check of suite {version}, but the report lacks {_some(missing)}"
            )
        for r in results:
            # A certify run refuses expected failures before it starts: one in a certify report is forged.
            # (A MUST check that did not pass is a genuine outcome: the verdict says not conformant.)
            if r["outcome"] == EXPECTED_FAILURE:
                problems.append(
                    f"certify mode forbids expected failures, but {r['id']} is one ({r['reason']})"
                )

    outcomes_ok = all(r.outcome in OUTCOMES for r in parsed.results)
    result = Verification(problems, certify=certify)
    if outcomes_ok and results:
        expected, reasons, warnings = parsed.computed_verdict()
        result.verdict = expected
        result.counts, result.waived, result.exempt = tally(results, capabilities)
        if parsed.verdict != expected or parsed.certified != (expected == "certified"):
            problems.append(
                f"the report claims verdict {parsed.verdict!r} (certified={parsed.certified}), its results "
                f"give {expected!r}"
            )
        if schema_version >= 2:  # the reasons' wording has not changed since schema 2 (suite 0.2.0)
            for key, mine in (("verdict_reasons", reasons), ("warnings", warnings)):
                theirs = getattr(parsed, key)
                if theirs is not None and theirs != mine:
                    problems.append(
                        f"{key} differ from what the results give: the report says {theirs!r}, "
                        f"the results give {mine!r}"
                    )
        result.profiles = parsed.computed_profiles()
        if parsed.profiles is not None:  # absent before suite 0.6.0: then only recomputed
            problems += profile_problems(parsed.profiles, result.profiles)
    return result


def profile_problems(claimed: list[dict[str, Any]], computed: list[dict[str, Any]]) -> list[str]:
    """What is wrong with a report's ``profiles`` (``claimed``, of the schema's shape) against the
    entries its results give (``computed``): a profile claimed with another verdict than its results
    give, one missing, one unknown or repeated, or an entry that differs in any other field."""
    problems = []
    ids = [str(c["id"]) for c in claimed]
    by_id = {c["id"]: c for c in claimed}
    for repeated in sorted({i for i in ids if ids.count(i) > 1}):
        problems.append(f"profiles hold {repeated!r} {ids.count(repeated)} times")
    mine_ids = {m["id"] for m in computed}
    for unknown in [i for i in dict.fromkeys(ids) if i not in mine_ids]:
        problems.append(f"profiles name {unknown!r}, which is no profile of the report's selected checks")
    for mine in computed:
        theirs = by_id.get(mine["id"])
        if theirs is None:
            problems.append(
                f"profiles lack {mine['name']} ({mine['id']}), whose checks the report holds: "
                f"its results give {mine['verdict']!r}"
            )
        elif theirs["verdict"] != mine["verdict"]:
            why = f": {'; '.join(mine['reasons'])}" if mine["reasons"] else ""
            problems.append(
                f"profiles claim {mine['name']} is {theirs['verdict']!r}, but its results give "
                f"{mine['verdict']!r}{why}"
            )
        elif theirs != mine:
            problems.append(
                f"profiles entry {mine['id']!r} differs from what the results give: the report says "
                f"{theirs!r}, the results give {mine!r}"
            )
    if not problems and claimed != computed:
        problems.append("profiles are not in the suite's order (conformance/profiles.py)")
    return problems


#: How the suite writes ``created``: UTC, to the second (report.created_now()).
_CREATED = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00")


def _window_problems(created: str, release, today: datetime.date, another_day: bool = False) -> list[str]:
    """The validity window. ``today`` is the day judged on (``--at``, else the clock); whatever it is, a
    report created after the clock's today (with a day's grace for clock skew) is from the future."""
    problems = []
    try:
        when = datetime.datetime.fromisoformat(created)
    except ValueError:
        return [f"created {created!r} is not an ISO 8601 time"]
    if when.tzinfo is None:
        return [f"created {created!r} has no time zone"]
    if not _CREATED.fullmatch(created):
        return [
            f"created {created!r} is not a UTC time to the second as the suite writes it (YYYY-MM-DDTHH:MM:SS+00:00)"
        ]
    day = when.date()
    v = release.suite_version
    if day < release.released:
        problems.append(f"created {day}, before suite version {v} was released ({release.released})")
    if day > release.valid_until:
        problems.append(f"created {day}, after suite version {v} stopped being valid ({release.valid_until})")
    clock = _today()
    if day > min(today, clock) + datetime.timedelta(days=1):
        if another_day and day <= clock + datetime.timedelta(days=1):
            problems.append(f"created {day}, after {today}, the day it is judged on (--at)")
        else:
            problems.append(f"created {day}, which is in the future (today is {min(today, clock)})")
    if today > release.valid_until:
        problems.append(
            f"suite version {v} was valid until {release.valid_until}; its reports have expired "
            f"(today is {today}): certify again with a current executorch-conformance"
        )
    return problems


def _some(ids: list[str], most: int = 12) -> str:
    """``ids`` joined, the first ``most`` of them (a forged report may list millions)."""
    shown = ", ".join(str(i)[:40] for i in ids[:most])
    return shown + (f" and {len(ids) - most} more" if len(ids) > most else "")


def _result_problems(results: list[dict[str, Any]], release) -> list[str]:
    if not results:
        return ["results is empty: a report must hold the result of every check it ran"]
    problems: list[str] = []
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


def _carry_over_problems(parsed: Report, released: dict) -> list[str]:
    """What is wrong with the failures a report says a previous claim carries over: each must be a MUST
    failure, the report must name the claim (``previous_report``), and the released check lists must give
    the same change of the check's requirement after the claim's release, within the report's minor
    series (conformance/requirement_changes.py)."""
    from conformance.requirement_changes import grace

    problems: list[str] = []
    claim = parsed.previous_report
    claimed_in = claim.get("suite_version") if isinstance(claim, dict) else None
    if claim is not None and claimed_in not in released:
        problems.append(f"previous_report is of suite {claimed_in!r}, which was never released")
        claimed_in = None
    for i, r in enumerate(parsed.results):
        note = r.carried_over
        if note is None:
            continue
        where = f"results[{i}] ({r.id}): carried_over"
        if r.outcome != FAILED or r.level != MUST:
            problems.append(
                f"{where} on a {r.level} check whose outcome is {r.outcome}: only a MUST failure carries over"
            )
            continue
        if claimed_in is None or note.get("from") != claimed_in:
            problems.append(
                f"{where} is from suite {note.get('from')!r}, but the report names "
                + (f"a claim of suite {claimed_in}" if claimed_in else "no released claim (previous_report)")
            )
            continue
        change = grace(r.id, claimed_in, released, parsed.suite_version)
        given = (note.get("change"), note.get("since"), note.get("failure_from"))
        if change is None or given != (change.kind, change.since, change.failure_from):
            found = (
                "no change in this minor series"
                if change is None
                else (f"{change.kind} in {change.since}, a failure from {change.failure_from}")
            )
            problems.append(
                f"{where} says {given[0]} in {given[1]}, a failure from {given[2]}; the released check lists "
                f"give {found} for {r.id} after suite {claimed_in}: the failure does not carry over"
            )
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


#: Exemption reasons of released suite versions other than CAPABILITY_ABSENT: up to 0.3.0, NDATA-3 tested the
#: executorch API before the capability, so an exempt NDATA-3 on executorch < 1.5 gave this reason.
_EARLIER_EXEMPT_REASONS = {
    "NDATA-3": (
        "this executorch's Python Runtime.load_program takes no data_path (added in 1.5.0), "
        "so no .ptd can be given from Python"
    ),
}
#: Outcomes a conditional check cannot have when its capability is not declared: it tests the capability
#: before anything else (a setup error, a crash or a lost worker can still happen).
_RAN = (PASSED, FAILED, EXPECTED_FAILURE, UNEXPECTED_PASS)


def _applicability_problems(report: dict[str, Any], release, capabilities: list[str]) -> list[str]:
    """Conditional checks must agree with backend.capabilities: a check of an undeclared capability did not
    run, and is exempt only for the reason the suite gives (a declared not-applicable does not replace it:
    the plugin leaves such a check to say CAPABILITY_ABSENT itself)."""
    problems = []
    for capability, n in Counter(capabilities).items():
        if n > 1:
            problems.append(f"backend.capabilities lists {capability!r} {n} times")
    schema_2 = isinstance(report.get("options"), dict)  # schema 1 (suite 0.1.0) worded reasons its own way
    for i, r in enumerate(report["results"]):
        released = release.checks.get(r["id"])
        capability = released and released["applies_if"]
        if not capability:
            continue
        absent = CAPABILITY_ABSENT.get(capability)
        where = f"results[{i}] ({r['id']})"
        if capability in capabilities:
            if r["outcome"] == NOT_APPLICABLE and r["reason"] == absent:
                problems.append(
                    f"{where} is not applicable because {absent!r}, but backend.capabilities declares "
                    f"{capability!r}"
                )
        elif r["outcome"] in _RAN:
            problems.append(
                f"{where} is {r['outcome']}, but backend.capabilities does not declare {capability!r}: a check "
                f"that applies to {capability} runs only for a backend that declares it"
            )
        elif (
            r["outcome"] == NOT_APPLICABLE
            and schema_2
            and r["reason"] not in (absent, _EARLIER_EXEMPT_REASONS.get(r["id"]))
        ):
            problems.append(
                f"{where} is exempt (backend.capabilities does not declare {capability!r}), but its reason "
                f"{r['reason'][:200]!r} is not the one the suite gives for that ({absent!r})"
            )
    return problems


_OPS = ("OPS-1", "OPS-2")


def _operator_problems(report: dict[str, Any], release) -> list[str]:
    """The operators section must be the rows the OPS checks' outcomes rest on."""
    problems: list[str] = []
    outcome = {r["id"]: r["outcome"] for r in report["results"] if r["id"] in _OPS}
    rows = report.get("operators")
    if rows is None:
        problems += [
            f"{i} passed, but the report has no operators section (an OPS check records one row per "
            "declared operator and dtype)"
            for i in _OPS
            if outcome.get(i) == PASSED
        ]
        return problems
    if all(outcome.get(i, NOT_APPLICABLE) == NOT_APPLICABLE for i in _OPS):
        return ["the report has an operators section, but no OPS check ran"]
    if not rows:
        return [
            "the operators section is empty; an OPS check that ran records every declared operator and dtype"
        ]
    both = outcome.get("OPS-1") == PASSED and outcome.get("OPS-2") == PASSED
    seen: set[tuple[str, str]] = set()
    for j, row in enumerate(rows):
        pair = (row["op"], row["dtype"])
        where = f"operators[{j}] ({row['op']} {row['dtype']})"
        if pair in seen:
            problems.append(f"{where} appears twice in operators")
        seen.add(pair)
        cases = row["cases"]
        for key, bound, name in (
            ("excluded", cases, "cases"),
            ("delegated", cases, "cases"),
            ("ran", row["delegated"], "delegated"),
            ("passed", row["ran"], "ran"),
        ):
            if row[key] > bound:
                problems.append(f"{where}: {key} is {row[key]}, more than its {bound} {name}")
        if row["ran"] == 0 and (row["worst_error"] is not None or row["tolerance_used"] is not None):
            problems.append(f"{where}: no case ran, yet it records a worst error")
        if outcome.get("OPS-1") == PASSED and row["delegated"] < cases - row["excluded"]:
            problems.append(
                f"OPS-1 passed, but {where} has {row['delegated']} delegated of {cases - row['excluded']} "
                "cases that must be"
            )
        if outcome.get("OPS-2") == PASSED and row["passed"] != row["ran"]:
            problems.append(
                f"OPS-2 passed, but {where} passed {row['passed']} of the {row['ran']} cases that ran"
            )
        if both and row["first_failing"] is not None:
            problems.append(
                f"OPS-1 and OPS-2 passed, but {where} names a failing case ({row['first_failing']['case']})"
            )
        if row.get("case_results") is not None:
            problems += _case_problems(row, where, outcome)
    if outcome.get("OPS-2") == PASSED and not any(row["ran"] for row in rows):
        problems.append("OPS-2 passed, but no operator case ran (operators: ran is 0 for every row)")
    if release.operator_cases is not None:
        problems += _corpus_problems(rows, release)
    return problems


#: The most problems verify lists for the case rows of one operator row.
CASE_PROBLEMS = 20


def _case_problems(row: dict[str, Any], where: str, outcome: dict[str, str]) -> list[str]:
    """The row's ``case_results`` must be one consistent row per case, and the row's counts, worst error
    and first failing case must be what they add up to."""
    from conformance.operators import case_outcomes as co

    cases = row["case_results"]
    problems = []
    for k, case in enumerate(cases):
        problems += co.row_problems(
            case, row["op"], row["dtype"], f"{where} case_results[{k}] ({case['case'][:40]})"
        )
    if len(problems) > CASE_PROBLEMS:  # a forged report may hold millions of rows
        problems = problems[:CASE_PROBLEMS] + [
            f"{where}: and {len(problems) - CASE_PROBLEMS} more case problems"
        ]
    names = [case["case"] for case in cases]
    if len(set(names)) != len(names):
        problems.append(f"{where}: case_results names a case twice")
    counts = {
        "cases": len(cases),
        "excluded": sum(case["excluded"] for case in cases),
        "delegated": sum(case["delegated"] for case in cases),
        "ran": sum(case["ran"] for case in cases),
        "passed": sum(case["outcome"] == co.PASSED for case in cases),
    }
    for key, count in counts.items():
        if row[key] != count:
            problems.append(f"{where}: {key} is {row[key]}, but its case_results add up to {count}")
    for key, largest in co.extremes(cases).items():
        if row[key] != largest:
            problems.append(f"{where}: {key} {row[key]} is not the largest of its case_results")
    failing = next((case for case in cases if case["outcome"] in co.FAILING), None)
    expected = None if failing is None else {"case": failing["case"], "reason": failing["reason"]}
    if row["first_failing"] != expected:
        problems.append(
            f"{where}: first_failing is {row['first_failing']!r}, but its first failing case_results row "
            f"gives {expected!r}"
        )
    if outcome.get("OPS-1") == PASSED:
        bad = [c["case"] for c in cases if not c["excluded"] and not c["delegated"]]
        if bad:
            problems.append(f"OPS-1 passed, but {where} has cases not delegated: {_some(bad)}")
    if outcome.get("OPS-2") == PASSED:
        bad = [c["case"] for c in cases if c["delegated"] and c["outcome"] != co.PASSED]
        if bad:
            problems.append(f"OPS-2 passed, but {where} has delegated cases that did not pass: {_some(bad)}")
    return problems


def _corpus_problems(rows: list[dict[str, Any]], release) -> list[str]:
    """Each row's case count must be what the released corpus has for the pair (with or without its cases
    of dynamic shapes, which run only for an operator declared dynamic; from 0.6.0 also the cases an
    integer-only backend's quantizer quantizes; 0 for a pair it lacks)."""
    problems = []
    for j, row in enumerate(rows):
        op = row["op"].removesuffix(".default")
        allowed = set(release.operator_cases.get(op, {}).get(row["dtype"], (0, 0)))
        if row["cases"] not in allowed:
            told = " or ".join(str(n) for n in sorted(allowed))
            problems.append(
                f"operators[{j}] ({row['op']} {row['dtype']}) has {row['cases']} cases, but the corpus of suite "
                f"{release.suite_version} has {told} for it"
            )
    return problems


def _target_problems(report: dict[str, Any]) -> list[str]:
    target, url = report.get("target"), report["options"].get("target")
    if target is not None and target["url"] != url:
        return [
            (
                f"the report has a target section ({target['url']!r}), but options.target is {url!r}: "
                "a target section comes only from a run with --target"
            )
        ]
    return []


def _simulator_problems(report: dict[str, Any], results: list[dict[str, Any]]) -> list[str]:
    """A result marked simulated needs the simulator that ran it, and a simulated run has no target."""
    simulator = report.get("simulator")
    marked = [r["id"] for r in results if r.get("simulated") is True]
    problems = []
    if marked and not isinstance(simulator, dict):
        problems.append(
            f"{_some(marked)} are marked simulated, but the report names no simulator: the results of a "
            "simulated run come with the report's simulator section"
        )
    if isinstance(simulator, dict) and report.get("target") is not None:
        problems.append(
            "the report names both a simulator and a target: a run with --target runs the backend's runtime "
            "there and never its simulator"
        )
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
        problems.append(f"selected names {_some(unknown)}, not checks of suite {release.suite_version}")
    lost = [s for s in selected if s not in ids]
    if lost:
        problems.append(f"selected {_some(lost)}, but the results lack them")
    chosen = set(selected)
    extra = [r["id"] for r in report["results"] if r["id"] not in chosen]
    if extra:
        problems.append(f"results hold {_some(extra)}, which the run did not select")
    if options["certify"] != certify:
        problems.append(f"options.certify is {options['certify']} but mode is {report['mode']!r}")
    if certify and options["checks"] is not None:
        problems.append(f"certify mode runs every check, but options.checks is {options['checks']!r}")
    if options["workers"] < 1:
        problems.append(f"options.workers is {options['workers']}")
    cache, cached = options.get("lowering_cache"), options.get("cached_lowerings", 0)
    if certify and cache == "on":
        problems.append("certify mode never reads the lowering cache, but options.lowering_cache is 'on'")
    if cache in ("write-only", "off") and cached:
        problems.append(f"options.lowering_cache is {cache!r}, but options.cached_lowerings is {cached}")
    wanted = expand_checks(options["checks"], release.check_ids)
    desc = "null (every check)" if options["checks"] is None else repr(options["checks"])
    not_selected = [i for i in wanted if i not in chosen]
    if not_selected:
        problems.append(f"options.checks {desc} selects {_some(not_selected)}, which selected lacks")
    wanted_set = set(wanted)
    not_wanted = [i for i in selected if i in release.checks and i not in wanted_set]
    if not_wanted:
        problems.append(f"selected holds {_some(not_wanted)}, which options.checks {desc} does not select")
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
