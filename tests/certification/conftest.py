"""Reports built from a template, and the real report of a short run."""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from templates import make_report


@pytest.fixture
def report() -> dict[str, Any]:
    """A valid, sealed certify-mode report of the current suite version, every check passed."""
    return make_report()


@pytest.fixture
def edit() -> Callable[..., dict[str, Any]]:
    """edit(report, fn) -> a deep copy changed by fn(copy) and resealed (so only fn's change is wrong)."""
    from conformance.report import seal

    def apply(report: dict[str, Any], fn: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
        changed = copy.deepcopy(report)
        changed.pop("content_sha256", None)
        fn(changed)
        return seal(changed)

    return apply
