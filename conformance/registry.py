"""What a check is: a stable ID, the clause of docs/contract.md it verifies, a
level, a title, and a function ``fn(ctx)`` that returns (optionally a note),
raises CheckFailed naming the defect, or raises NotApplicable. The ordered list
of all checks belongs to ``conformance.checks``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from conformance.outcomes import MUST, SHOULD, CheckFailed, NotApplicable, ensure  # noqa: F401  (re-exported)

#: Areas in the order the checks run and are listed.
AREAS = ("AOT", "BLOB", "SER", "RT", "STATE", "MTH", "NDATA", "OPS", "QNT", "DYN", "CMP", "PKG")


@dataclasses.dataclass(frozen=True)
class Check:
    id: str
    clause: str
    level: str  # MUST checks are required for certification
    title: str
    run: Callable = dataclasses.field(repr=False, compare=False)
    #: A capability the backend may declare (e.g. "named_data"); a backend
    #: that does not declare it is exempt from the check, even a MUST one.
    applies_if: str | None = None
    #: ``fn(ctx)``, called when a run that will run this check begins: starts a slow artifact of the check
    #: (``Context.ahead``) so that it is made while the checks before it run. It raises nothing.
    ahead: Callable | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def area(self) -> str:
        return self.id.split("-")[0]

    @property
    def mandatory(self) -> bool:
        return self.level == MUST

    @property
    def sort_key(self) -> tuple:
        area, _, number = self.id.partition("-")
        return (AREAS.index(area) if area in AREAS else len(AREAS), area, int(number))


def selects(selection: Iterable[str] | None, check_id: str) -> bool:
    """Whether ``selection`` (check IDs and areas, as ``--checks`` gives them; None: every check) selects
    the check ``check_id``: the one rule every entry point and ``verify`` apply."""
    if selection is None:
        return True
    chosen = set(selection)
    return check_id in chosen or check_id.split("-", maxsplit=1)[0] in chosen


def exempt(applies_if: str | None, capabilities: Iterable[str]) -> bool:
    """Whether a check conditional on ``applies_if`` is one the backend is exempt from: it does not declare
    that capability (docs/contract.md, "Conditional checks"). An unconditional check never is."""
    return bool(applies_if) and applies_if not in set(capabilities)


def check(
    id: str,
    clause: str,
    title: str,
    level: str = MUST,
    applies_if: str | None = None,
    ahead: Callable | None = None,
):
    """Marks the decorated function ``fn(ctx)`` as the check ``id`` (found by ``conformance.checks``)."""

    def mark(fn: Callable) -> Callable:
        marked = Check(
            id=id, clause=clause, level=level, title=title, run=fn, applies_if=applies_if, ahead=ahead
        )
        fn.conformance_check = marked  # type: ignore[attr-defined]  # read back by conformance.checks
        return fn

    return mark


#: The clauses of docs/contract.md no check tests yet ("Checked by: none yet"), each with why in a few
#: words: lists of checks say so, since a missing number (there is no PKG-4) otherwise reads as an
#: omission. tests/docs holds this to the contract.
NOT_CHECKED = {
    "C-RT-7": "the suite forges only version fields, not malformed blobs",
    "C-RT-8": "the suite does not link applications against a static archive",
    "C-PKG-4": "the suite runs inside one ExecuTorch installation and cannot provide a second (so no PKG-4)",
}


def not_checked_lines() -> list[str]:
    """'not checked by the suite: ...' lines, one per clause of ``NOT_CHECKED``."""
    return [f"not checked by the suite: {clause}: {why}" for clause, why in NOT_CHECKED.items()]
