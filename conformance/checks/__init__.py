"""The contract's checks, one module per area (IDs AOT-, BLOB-, SER-, RT-,
STATE-, MTH-, NDATA-, OPS-, QNT-, DYN-, CMP-, PKG-), and the ordered list of all of them."""

from __future__ import annotations

import functools
from typing import Any

from conformance.checks import (
    aot,
    blob,
    composition,
    dynamic,
    methods,
    named_data,
    operators,
    packaging,
    quantized,
    runtime,
    serialization,
    state,
)
from conformance.registry import Check

MODULES = (
    aot,
    blob,
    serialization,
    runtime,
    state,
    methods,
    named_data,
    operators,
    quantized,
    dynamic,
    composition,
    packaging,
)


@functools.cache
def all_checks() -> tuple[Check, ...]:
    """Every check, in area and number order; IDs are unique."""
    found: dict[str, Check] = {}
    for module in MODULES:
        for value in vars(module).values():
            c = getattr(value, "conformance_check", None)
            if isinstance(c, Check) and c.run is value:
                if c.id in found:
                    raise ValueError(f"duplicate check id {c.id} in {module.__name__}")
                found[c.id] = c
    return tuple(sorted(found.values(), key=lambda c: c.sort_key))


def check_ids() -> list[str]:
    return [c.id for c in all_checks()]


def run_check(ctx: Any, check: Check) -> tuple[str, str]:
    """Runs ``check`` on the Context ``ctx`` as the suite does, its clock started: (outcome, reason), the
    outcome of a CheckFailed (failed, crashed, timed_out), not_applicable, or passed with no reason."""
    from conformance.outcomes import FAILED, NOT_APPLICABLE, PASSED, CheckFailed, NotApplicable

    ctx.start_check(check.id)
    try:
        check.run(ctx)
    except NotApplicable as exc:
        return NOT_APPLICABLE, str(exc)
    except CheckFailed as exc:
        return getattr(exc, "outcome", FAILED), str(exc)
    return PASSED, ""
