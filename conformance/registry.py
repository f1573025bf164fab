"""The checks: each has a stable ID, cites a clause of docs/contract.md, and
either passes, raises CheckFailed naming the defect, or raises NotApplicable."""

from __future__ import annotations

import dataclasses
from typing import Callable

from conformance.outcomes import MUST, SHOULD, CheckFailed, NotApplicable, ensure  # noqa: F401  (re-exported)


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

    @property
    def area(self) -> str:
        return self.id.split("-")[0]

    @property
    def mandatory(self) -> bool:
        return self.level == MUST


CHECKS: dict[str, Check] = {}


def check(id: str, clause: str, title: str, level: str = MUST, applies_if: str | None = None):
    """Registers the decorated function ``fn(ctx)`` as a check."""

    def register(fn: Callable) -> Callable:
        if id in CHECKS:
            raise ValueError(f"duplicate check id {id}")
        CHECKS[id] = Check(id=id, clause=clause, level=level, title=title, run=fn, applies_if=applies_if)
        return fn

    return register


def all_checks() -> list[Check]:
    """Every registered check, in ID order."""
    import conformance.checks  # noqa: F401  (registers the checks)

    return [CHECKS[k] for k in sorted(CHECKS, key=_sort_key)]


def _sort_key(check_id: str) -> tuple:
    area, _, number = check_id.partition("-")
    order = ["AOT", "BLOB", "SER", "RT", "NDATA", "PKG"]
    return (order.index(area) if area in order else len(order), area, int(number))
