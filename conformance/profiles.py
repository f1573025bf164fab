"""Conformance profiles: named groups of checks, each with a verdict of its own (docs/contract.md,
"Profiles").

``PROFILES`` is the one list of them, in the order reports, tables, pages and badges show them. A
profile names its checks by id (``"RT-5"``) or by area (``"NDATA"``: every check of the area), and says
why they belong together. Every check of the suite, and of every released suite version, is in exactly
one profile (``membership_problems``; tests/certification/test_profiles.py holds the suite to it), so a new check
lands in a profile the day it is added.

The verdict of each profile is the suite's one verdict rule applied to the profile's results
(``conformance.report.profile_verdicts``); this module holds the table and what follows from the
verdicts alone (``certified_profiles``). It imports nothing of the suite.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: The verdict of a profile none of whose checks applies to the backend: each is a conditional check of
#: a capability the backend does not declare. The other verdicts are the report's own ("certified",
#: "conformant", "not conformant").
NOT_CLAIMED = "not claimed"

_ENTRY = re.compile(r"[A-Z]+(-[1-9][0-9]*)?")


@dataclasses.dataclass(frozen=True)
class Profile:
    """A named group of checks: ``id`` (the key in reports and JUnit), ``name`` (what people read),
    ``checks`` (check ids, or areas standing for every check of theirs) and ``reason`` (what passing it
    means)."""

    id: str
    name: str
    checks: tuple[str, ...]
    reason: str

    def covers(self, check_id: str) -> bool:
        """Whether the check ``check_id`` belongs to this profile (named, or of a named area)."""
        return check_id in self.checks or check_id.split("-", maxsplit=1)[0] in self.checks


#: The profile every certification needs: no other profile is certified without it.
CORE = "core"

PROFILES: tuple[Profile, ...] = (
    Profile(
        CORE,
        "Core",
        (
            "AOT",
            "SER",
            "RT-1",
            "RT-2",
            "RT-3",
            "RT-4",
            "RT-5",
            "RT-6",
            "RT-8",
            "RT-9",
            "RT-10",
            "STATE-1",
            "MTH-1",
            "OPS",
            "PKG",
        ),
        "the backend registers, lowers, serializes, runs its samples and declared operators right without "
        "writing into its inputs or keeping memory per call, runs methods on several threads at once, keeps a program's state across calls, runs each "
        "method of a program of several, refuses a blob of an incompatible version clearly, fails clearly when "
        "it is missing, and installs cleanly: what every backend needs, whatever its blob format",
    ),
    Profile(
        "versioned_blobs",
        "Versioned blobs",
        ("BLOB", "RT-7"),
        "every blob carries the contract header (ECVH) naming who wrote it, and the runtime accepts and "
        "refuses blobs as its acceptance rules declare",
    ),
    Profile(
        "named_data",
        "Named data",
        ("NDATA", "MTH-2"),
        "large constants go to an external .ptd and the program runs with it, and fails clearly without it; "
        "methods that share weights store them once",
    ),
    Profile(
        "quantized",
        "Quantized",
        ("QNT",),
        "a PT2E-quantized model is delegated and computes within the declared quantization steps",
    ),
    Profile(
        "dynamic_shapes",
        "Dynamic shapes",
        ("DYN",),
        "bounded dynamic sizes run and resize outputs; a size above a bound is refused or computed right",
    ),
    Profile(
        "composition",
        "Composition",
        ("CMP",),
        "the backend's delegates live next to XNNPACK's in one program and it runs right",
    ),
    Profile(
        "stateful_programs",
        "Stateful programs",
        ("STATE-2",),
        "the delegate holds the state a program mutates (a KV cache) and keeps it as C-STATE-1 requires",
    ),
)


def _validate(profiles: Sequence[Profile]) -> None:
    """Raises ValueError naming a malformed entry, a repeated id or an entry two profiles list."""
    seen: dict[str, str] = {}
    ids = [p.id for p in profiles]
    if len(set(ids)) != len(ids):
        raise ValueError(f"profile ids repeat: {ids}")
    for profile in profiles:
        for entry in profile.checks:
            if not _ENTRY.fullmatch(entry):
                raise ValueError(f"profile {profile.id!r} lists {entry!r}, neither a check id nor an area")
            if entry in seen:
                raise ValueError(f"profiles {seen[entry]!r} and {profile.id!r} both list {entry!r}")
            seen[entry] = profile.id


_validate(PROFILES)


def profiles_of(check_id: str, profiles: Sequence[Profile] = PROFILES) -> list[Profile]:
    """The profiles ``check_id`` belongs to (exactly one for every check of the suite)."""
    return [p for p in profiles if p.covers(check_id)]


def profile_of(check_id: str) -> Profile | None:
    """The profile of ``check_id``, or None for an id no profile lists."""
    found = profiles_of(check_id)
    return found[0] if len(found) == 1 else None


def membership_problems(check_ids: Iterable[str], profiles: Sequence[Profile] = PROFILES) -> list[str]:
    """One line per check of ``check_ids`` that is in no profile or in more than one."""
    problems = []
    for check_id in check_ids:
        found = profiles_of(check_id, profiles)
        if not found:
            problems.append(f"{check_id} is in no profile: add it to one in conformance/profiles.py")
        elif len(found) > 1:
            problems.append(f"{check_id} is in {len(found)} profiles: {', '.join(p.id for p in found)}")
    return problems


def certified_profiles(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """The names of the profiles a report's ``profiles`` entries certify, in table order: those whose
    verdict is "certified", and none unless Core is one of them."""
    certified = [e for e in entries if isinstance(e, Mapping) and e.get("verdict") == "certified"]
    if not any(e.get("id") == CORE for e in certified):
        return []
    return [str(e.get("name")) for e in certified]
