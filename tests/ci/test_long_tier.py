"""tests/long_tier.py keeps for CI only tests that exist and are marked ``full``, and tests/conftest.py
turns every other ``full`` test into a ``long`` one: CI (``-m "not long"``) runs the listed short form."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiers(tmp_path_factory) -> dict[str, set[str]]:
    """Every collected test's tier marks, from one collection of the whole tree (tier_listing.py)."""
    listing = tmp_path_factory.mktemp("tiers") / "listing.jsonl"
    env = dict(os.environ, TIER_LISTING=str(listing))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tier_listing",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert proc.returncode == 0 and listing.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [json.loads(line) for line in listing.read_text().splitlines()]
    assert rows, proc.stdout[-3000:]
    return {row["nodeid"]: set(row["marks"]) for row in rows}


def _long_tier():
    sys.path.insert(0, str(REPO / "tests"))
    try:
        import long_tier
    finally:
        sys.path.remove(str(REPO / "tests"))
    return long_tier


@pytest.mark.full  # a collection of the whole tree: CI runs it (tests/long_tier.py keeps it)
def test_every_key_names_a_full_test(tiers):
    tier = _long_tier()
    full = [n for n, marks in tiers.items() if "full" in marks]
    for key in tier.CI_KEEPS:
        assert any(tier._matches(key, n) for n in full), (
            f"tests/long_tier.py keeps {key!r} for CI, which matches no test marked full"
        )


@pytest.mark.full  # the same collection
def test_ci_runs_the_kept_full_tests_and_no_other(tiers):
    """`long` marks every full test that is not kept (what `scripts/test.sh --full` leaves out), and only
    those."""
    tier = _long_tier()
    full = {n for n, marks in tiers.items() if "full" in marks}
    long = {n for n, marks in tiers.items() if "long" in marks}
    assert long == {n for n in full if tier.kept(n) is None}
    assert long and len(long) < len(full)
