"""The problems ``verify`` finds in the parts of a report (``check_report`` in
conformance/certification/verify.py gathers them): each ``*_problems`` function takes the report (or the
part) and the release that wrote it (``conformance.released``) and returns one sentence per problem, naming
the field, what it holds and what the release says instead."""

from __future__ import annotations

import datetime
import re
from collections import Counter
from typing import Any

from conformance.descriptor import CAPABILITY_ABSENT
from conformance.outcomes import (
    EXPECTED_FAILURE,
    FAILED,
    MUST,
    NOT_APPLICABLE,
    OUTCOMES,
    PASSED,
    UNEXPECTED_PASS,
)
from conformance.registry import selects
from conformance.report import ProfileRow, Report, ResultRow


def profile_problems(claimed: list[ProfileRow], computed: list[ProfileRow]) -> list[str]:
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


def window_problems(created: str, release, today: datetime.date, another_day: bool = False) -> list[str]:
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
    clock = today_utc()
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


def some_ids(ids: list[str], most: int = 12) -> str:
    """``ids`` joined, the first ``most`` of them (a forged report may list millions)."""
    shown = ", ".join(str(i)[:40] for i in ids[:most])
    return shown + (f" and {len(ids) - most} more" if len(ids) > most else "")


def result_problems(results: list[ResultRow], release) -> list[str]:
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


def carry_over_problems(parsed: Report, released: dict) -> list[str]:
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


def summary_problems(summary: dict[str, int], results: list[ResultRow]) -> list[str]:
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


def applicability_problems(report: dict[str, Any], release, capabilities: list[str]) -> list[str]:
    """Conditional checks must agree with backend.capabilities: a check of an undeclared capability did not
    run, and is exempt only for the reason the suite gives (a declared not-applicable does not replace it:
    the plugin leaves such a check to say CAPABILITY_ABSENT itself)."""
    problems = []
    for capability, n in Counter(capabilities).items():
        if n > 1:
            problems.append(f"backend.capabilities lists {capability!r} {n} times")
    schema_2 = isinstance(report.get("options"), dict)  # schema 1 (suite 0.1.0) worded reasons its own way
    results: list[ResultRow] = report["results"]  # of the schema's shape: verify read it as a Report first
    for i, r in enumerate(results):
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


def target_problems(report: dict[str, Any]) -> list[str]:
    target, url = report.get("target"), report["options"].get("target")
    if target is not None and target["url"] != url:
        return [
            (
                f"the report has a target section ({target['url']!r}), but options.target is {url!r}: "
                "a target section comes only from a run with --target"
            )
        ]
    return []


def simulator_problems(report: dict[str, Any], results: list[ResultRow]) -> list[str]:
    """A result marked simulated needs the simulator that ran it, and a simulated run has no target."""
    simulator = report.get("simulator")
    marked = [r["id"] for r in results if r.get("simulated") is True]
    problems = []
    if marked and not isinstance(simulator, dict):
        problems.append(
            f"{some_ids(marked)} are marked simulated, but the report names no simulator: the results of a "
            "simulated run come with the report's simulator section"
        )
    if isinstance(simulator, dict) and report.get("target") is not None:
        problems.append(
            "the report names both a simulator and a target: a run with --target runs the backend's runtime "
            "there and never its simulator"
        )
    return problems


def expand_checks(spec: str | list[str] | None, ids: list[str]) -> list[str]:
    """The ids a ``--checks`` value selects among ``ids`` (None: every check)."""
    if spec is None:
        return list(ids)
    parts = spec.split(",") if isinstance(spec, str) else spec
    wanted = {p.strip() for p in parts if p.strip()}
    return [i for i in ids if selects(wanted, i)]


def selection_problems(report: dict[str, Any], release, certify: bool) -> list[str]:
    problems = []
    selected, options = report["selected"], report["options"]
    results: list[ResultRow] = report["results"]  # of the schema's shape: verify read it as a Report first
    ids = {r["id"] for r in results}
    for id_, n in Counter(selected).items():
        if n > 1:
            problems.append(f"selected lists {id_} {n} times")
    unknown = [s for s in selected if s not in release.checks]
    if unknown:
        problems.append(f"selected names {some_ids(unknown)}, not checks of suite {release.suite_version}")
    lost = [s for s in selected if s not in ids]
    if lost:
        problems.append(f"selected {some_ids(lost)}, but the results lack them")
    chosen = set(selected)
    extra = [r["id"] for r in results if r["id"] not in chosen]
    if extra:
        problems.append(f"results hold {some_ids(extra)}, which the run did not select")
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
        problems.append(f"options.checks {desc} selects {some_ids(not_selected)}, which selected lacks")
    wanted_set = set(wanted)
    not_wanted = [i for i in selected if i in release.checks and i not in wanted_set]
    if not_wanted:
        problems.append(f"selected holds {some_ids(not_wanted)}, which options.checks {desc} does not select")
    return problems


def today_utc() -> datetime.date:
    return datetime.datetime.now(datetime.timezone.utc).date()
