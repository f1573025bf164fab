"""Marks the tests of the long tier (tests/long_tier.py) ``long``, so that ``scripts/test.sh --full`` (CI)
leaves them out and ``--long`` runs them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("long_tier", Path(__file__).parent / "tests" / "long_tier.py")
assert _spec is not None and _spec.loader is not None
long_tier = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(long_tier)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        why = long_tier.reason(item.nodeid)
        if why is not None:
            item.add_marker(pytest.mark.long(reason=why))
