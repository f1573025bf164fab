"""One test per check of the contract (IDs and clauses: docs/contract.md)."""

from __future__ import annotations

import pytest

from conformance.registry import CheckFailed, NotApplicable, all_checks


@pytest.mark.parametrize("check", all_checks(), ids=lambda c: c.id)
def test_check(check, et_context):
    try:
        check.run(et_context)
    except NotApplicable as exc:
        pytest.skip(f"not applicable: {exc}")
    except CheckFailed as exc:
        pytest.fail(str(exc), pytrace=False)
