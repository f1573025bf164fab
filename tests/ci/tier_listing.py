"""A pytest plugin for tests/ci/test_long_tier.py: after collection (so after tests/conftest.py has marked
the long tier), writes each collected test's node id and its tier marks, one JSON object per line, to the
file named by $TIER_LISTING."""

from __future__ import annotations

import json
import os

import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    with open(os.environ["TIER_LISTING"], "w", encoding="utf-8") as out:
        for item in session.items:
            marks = [m for m in ("full", "long") if item.get_closest_marker(m) is not None]
            out.write(json.dumps({"nodeid": item.nodeid, "marks": marks}) + "\n")
