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
from pathlib import Path
from typing import Any

from conformance.certification.operator_problems import operator_problems
from conformance.certification.report_problems import (
    applicability_problems,
    carry_over_problems,
    profile_problems,
    result_problems,
    selection_problems,
    simulator_problems,
    some_ids,
    summary_problems,
    target_problems,
    today_utc,
    window_problems,
)
from conformance.certification.result_counts import counts_phrase, tally
from conformance.certification.strict_json import Unreadable, read_json
from conformance.outcomes import (
    EXPECTED_FAILURE,
    OUTCOMES,
)
from conformance.profiles import certified_profiles
from conformance.report import (
    MODES,
    SCHEMA,
    ProfileRow,
    Report,
    ReportTypeError,
    content_hash,
)
from conformance.report.schema import kind_of
from conformance.version import REPORT_SCHEMA_VERSION


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
    profiles: list[ProfileRow] = dataclasses.field(default_factory=list)

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


def check_report(
    report: Any, *, today: datetime.date | None = None, released: dict | None = None
) -> Verification:
    """Verifies ``report`` (any JSON value) and recomputes its verdict."""
    from conformance.released import releases

    released = releases() if released is None else released
    judged_on_another_day = today is not None and today != today_utc()
    today = today or today_utc()
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
    problems += window_problems(parsed.created, release, today, judged_on_another_day)
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
    problems += result_problems(results, release)
    problems += summary_problems(parsed.summary, results)
    problems += applicability_problems(report, release, capabilities)
    problems += operator_problems(report, release)
    problems += carry_over_problems(parsed, released)
    if schema_version >= 2:
        problems += selection_problems(report, release, certify)
        problems += target_problems(report)
    problems += simulator_problems(report, results)
    if certify:
        missing = [i for i in release.check_ids if i not in {r["id"] for r in results}]
        if missing:
            problems.append(
                f"certify mode needs every check of suite {version}, but the report lacks {some_ids(missing)}"
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
