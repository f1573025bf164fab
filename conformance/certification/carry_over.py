"""A conformance claim carried over a changed requirement (docs/api-stability.md, "A claim carries over").

``executorch-conformance run --previous-report REPORT`` names a report of the same backend by an earlier
suite release, the claim. A MUST check that fails now is a warning instead of a failure of the verdict
when its requirement changed after the claim's release and the change is of this minor series
(``conformance.requirement_changes.grace``), and the claim met the requirement as it was:

- a check made stricter (``tightened``): the claim's report holds it as ``passed``;
- a check added (``added``): the claim was a whole run (certify mode, or every check of its release)
  whose verdict was conformant or certified.

The result keeps its outcome (``failed``) and its reason, and gains ``carried_over``, which says from
which release, what changed, and from which release the failure counts. Only ``failed`` carries: a crash,
a timeout or an error is never a question of a changed requirement. The claim's report must verify
(``verify``), name the same backend id and be of an earlier release; a certify run carries over only a
certified report. The report records the claim (``previous_report``: its suite version, verdict, mode,
creation time and sha256), and ``verify`` checks each ``carried_over`` against the released check lists.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from conformance.outcomes import FAILED, MUST, PASSED
from conformance.report import CarriedOver, ResultRow
from conformance.requirement_changes import grace
from conformance.version_numbers import release as release_numbers

#: The verdicts of a claim.
CLAIMED = ("conformant", "certified")


class CarryOverError(ValueError):
    """The previous report cannot be a claim; the message names the file, what is wrong and what to do."""


@dataclasses.dataclass(frozen=True)
class Claim:
    """What a previous report claims: its release, verdict and mode, whether it ran every check of its
    release, and each check's outcome."""

    suite_version: str
    verdict: str
    mode: str
    created: str
    sha256: str
    whole: bool
    outcomes: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        """The report's ``previous_report``."""
        return {
            "suite_version": self.suite_version,
            "verdict": self.verdict,
            "mode": self.mode,
            "created": self.created,
            "sha256": self.sha256,
        }


@dataclasses.dataclass(frozen=True, eq=False)  # hashed by identity: pluggy keeps its plugins in a set
class HandedClaim:
    """A claim ``executorch-conformance run`` has read (before any check runs), handed to the run it starts
    in the same process as a plugin object of ``pytest.main``, so that the report is read and verified
    once; the plugin reads the report itself when nothing was handed (a plain pytest run)."""

    path: str
    claim: Claim

    @staticmethod
    def find(plugins: Any, path: str) -> Claim | None:
        """The claim handed for ``path`` among ``plugins``, or None."""
        return next((p.claim for p in plugins if isinstance(p, HandedClaim) and p.path == path), None)


def read_claim(
    path: str | Path, backend_id: str, certify: bool, current: str, flag: str = "--previous-report"
) -> Claim:
    """The claim of the report at ``path`` for a run of ``backend_id`` by suite ``current``;
    CarryOverError when it cannot be one, naming the option as the user spelled it (``flag``)."""
    from conformance.certification.strict_json import Unreadable, read_json
    from conformance.certification.verify import check_report
    from conformance.released import releases
    from conformance.report import file_sha256

    where = f"{flag}: the previous report {path}"
    try:
        data = read_json(path)
    except Unreadable as exc:
        raise CarryOverError(f"{where} {exc}") from None
    verification = check_report(data)
    if verification.problems:
        more = len(verification.problems) - 1
        raise CarryOverError(
            f"{where} does not verify: {verification.problems[0]}"
            + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")
            + f"; see executorch-conformance verify {path}"
        )
    version, backend = data["suite_version"], data["backend"]["id"]
    if backend != backend_id:
        raise CarryOverError(
            f"{where} is of backend {backend!r}, not {backend_id!r}: a claim carries over for its own backend only"
        )
    if release_numbers(version) >= release_numbers(current):
        raise CarryOverError(
            f"{where} was written by suite {version}, not by a release before this suite {current}: "
            f"nothing of it carries over; run without {flag}"
        )
    if certify and data["verdict"] != "certified":
        raise CarryOverError(
            f"{where} is a {data['mode']} run whose verdict is {data['verdict']!r}: a certify run carries over "
            "only a certified report; give the report of a certify run"
        )
    results: list[ResultRow] = data["results"]  # of the schema's shape: it verified
    ran = {r["id"] for r in results}
    return Claim(
        suite_version=version,
        verdict=data["verdict"],
        mode=data["mode"],
        created=data["created"],
        sha256=file_sha256(path),
        whole=data["mode"] == "certify" or set(releases()[version].check_ids) <= ran,
        outcomes={r["id"]: r["outcome"] for r in results},
    )


def carried(
    result: ResultRow, claim: Claim, current: str, released: dict | None = None
) -> CarriedOver | None:
    """The ``carried_over`` of ``result`` under ``claim`` in suite ``current``, or None if it does not
    carry (``released``: the released check lists, default this install's)."""
    from conformance.released import releases

    if result["outcome"] != FAILED or result["level"] != MUST:
        return None
    change = grace(result["id"], claim.suite_version, releases() if released is None else released, current)
    if change is None:
        return None
    if change.kind == "tightened":
        met = claim.outcomes.get(result["id"]) == PASSED
    else:
        met = claim.whole and claim.verdict in CLAIMED
    if not met:
        return None
    return {
        "from": claim.suite_version,
        "change": change.kind,
        "since": change.since,
        "failure_from": change.failure_from,
        "what": change.what,
    }


def carry(results: list[ResultRow], claim: Claim, current: str) -> list[ResultRow]:
    """``results`` with ``carried_over`` added to each failure the claim carries over."""
    out: list[ResultRow] = []
    for r in results:
        note = carried(r, claim, current)
        out.append({**r, "carried_over": note} if note else r)
    return out
