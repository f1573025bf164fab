"""When a check's requirement changed, and for how long a claim made before the change carries over it
(docs/api-stability.md, "A claim carries over").

A requirement changes in a release in one of two ways: the release adds the check (it is absent from
the check list of every earlier release, ``conformance/released/*.json``), or it makes an existing
check stricter (``TIGHTENED`` below, written into the release's check list as ``tightenings``). A
backend that met the requirement as it was gets a warning, not a failure, for the rest of the minor
series that changed it; from the next minor release on the failure counts. The window is computed from
the released check lists alone, so that ``verify`` judges a report of any release by that release's
own record.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from conformance.version_numbers import release as release_numbers


@dataclasses.dataclass(frozen=True)
class Tightening:
    """An existing check made stricter: ``check``'s requirement in release ``since`` fails a backend the
    releases before it passed."""

    check: str
    since: str
    #: what is stricter, in one sentence a vendor reads
    what: str

    def to_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)


#: The tightenings of this source tree's release (``released/<version>.json`` records them as its
#: ``tightenings``). RT-6's clause (C-RT-6) always said that a library registers no id but its own; the
#: check did not look until 0.6.0, so a backend that passed it before gets the notice of one minor release.
TIGHTENED: tuple[Tightening, ...] = (
    Tightening(
        "RT-6",
        "0.6.0",
        "the runtime libraries must register no backend id besides the backend's own (only the own id's "
        "absence from a program was checked before)",
    ),
    Tightening(
        "OPS-2",
        "0.6.0",
        "every elementwise operator with special-value cases has a case with subnormal operands, which a runtime "
        "that flushes them to zero fails unless its descriptor declares subnormals='flushed'",
    ),
)


@dataclasses.dataclass(frozen=True)
class Change:
    """How ``check``'s requirement changed after a claim: ``kind`` 'added' (the check is new) or
    'tightened', in release ``since``, counted as a failure from ``failure_from``."""

    check: str
    kind: str
    since: str
    failure_from: str
    what: str


def next_minor(version: str) -> str:
    """The first release of the minor series after ``version``'s: '0.6.2' -> '0.7.0'."""
    major, minor, _ = release_numbers(version)
    return f"{major}.{minor + 1}.0"


def changes_after(check: str, claimed_in: str, releases: dict[str, Any], up_to: str) -> list[Change]:
    """The changes of ``check``'s requirement in the releases after ``claimed_in`` up to ``up_to``
    (both suite versions), oldest first, from the released check lists ``releases`` (version ->
    ``conformance.released.Release``)."""
    low, high = release_numbers(claimed_in), release_numbers(up_to)
    between = sorted(
        (v for v in releases if low < release_numbers(v) <= high), key=lambda v: release_numbers(v)
    )
    found: list[Change] = []
    listed = check in releases[claimed_in].checks if claimed_in in releases else False
    for version in between:
        rel = releases[version]
        if check in rel.checks and not listed:
            found.append(
                Change(check, "added", version, next_minor(version), f"{check} is new in suite {version}")
            )
        listed = listed or check in rel.checks
        for t in rel.tightenings:
            if t.check == check and t.since == version:
                found.append(Change(check, "tightened", version, next_minor(version), t.what))
    return found


def grace(check: str, claimed_in: str, releases: dict[str, Any], current: str) -> Change | None:
    """The change that a claim made in release ``claimed_in`` carries over in release ``current``: the
    latest change of ``check`` after the claim, if every change after the claim is of ``current``'s
    minor series (before its ``failure_from``); None otherwise (no change: the claim says nothing new;
    a change of an earlier series: its notice has been given)."""
    changes = changes_after(check, claimed_in, releases, current)
    if not changes:
        return None
    now = release_numbers(current)
    if any(release_numbers(c.failure_from) <= now for c in changes):
        return None
    return changes[-1]
