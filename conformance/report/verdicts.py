"""The verdict a report's results give, one rule for the whole report and for each profile.

``verdict``: certified, conformant or not conformant, with the reasons (checks failed by one cause named
together) and the warnings; ``profile_verdicts``: the same rule over each profile's results
(conformance/profiles.py); ``summarize``: the count of each outcome.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from conformance.outcomes import BAD, FAILED, MUST, NOT_APPLICABLE, OUTCOMES, PASSED
from conformance.profiles import NOT_CLAIMED, PROFILES
from conformance.registry import exempt
from conformance.report.rows import ProfileRow, ResultRow

#: Why a MUST check that passed only simulated does not certify (docs/contract.md, "Simulated runtimes").
SIMULATED_ONLY_REASON = (
    "its programs ran with the backend's delegates in the vendor's simulator, and a simulated pass does not "
    'certify (docs/contract.md, "Simulated runtimes")'
)


def verdict(
    results: Sequence[ResultRow],
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


def _exempt(result: ResultRow, capabilities) -> bool:
    return exempt(result.get("applies_if"), capabilities)


def profile_verdicts(
    results: Sequence[ResultRow],
    certify: bool,
    capabilities: list[str] | tuple[str, ...] = (),
    interrupted: bool = False,
) -> list[ProfileRow]:
    """One entry per profile (conformance/profiles.py) with a result among ``results``, in table order:
    ``id``, ``name``, ``checks`` (the ids of its results), ``verdict`` and ``reasons``.

    The verdict is ``verdict`` above applied to the profile's results alone, so a profile is certified
    (conformant) exactly when the report would be if it held only these results. A profile whose every
    result is a conditional check of a capability the backend does not declare is "not claimed", its
    reason naming the capabilities. A profile none of whose checks was selected has no entry.
    """
    entries: list[ProfileRow] = []
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


def summarize(results: Sequence[ResultRow]) -> dict[str, int]:
    """Count of each outcome, and the total."""
    summary = {o: sum(r["outcome"] == o for r in results) for o in OUTCOMES}
    summary["total"] = len(results)
    return summary
