"""Marks the tests of the long tier ``long``: every test marked ``full`` that tests/long_tier.py does not
keep for CI. ``scripts/test.sh --full`` (CI) leaves them out and ``--long`` runs them.

Here and not in a conftest.py at the repository's root: pytest loads a root conftest into every session
under it, the suite's own certify runs from a checkout included, and certify refuses plugins that are
not the suite's (tests/conformance/test_cli.py, test_trustworthy_verdicts.py)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

# Loaded by path: tests/ is not a package, and a top-level "tests" package of some installed wheel would
# shadow an import by name.
_spec = importlib.util.spec_from_file_location("long_tier", Path(__file__).parent / "long_tier.py")
assert _spec is not None and _spec.loader is not None
long_tier = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(long_tier)

# NDATA-5 crosses 2^24 instead of 2^32 in every suite run the tests start (16 GiB of memory and a minute each
# otherwise): tests/conformance/test_large_weights.py crosses 2^32 in the long tier.
os.environ.setdefault("EXECUTORCH_CONFORMANCE_LARGE_WEIGHTS", "16MiB")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("full") is not None and long_tier.kept(item.nodeid) is None:
            item.add_marker(pytest.mark.long)
