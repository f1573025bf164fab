"""tests/long_tier.py keeps for CI only tests that exist and are marked ``full``, and tests/conftest.py
turns every other ``full`` test into a ``long`` one: CI (``-m "not long"``) runs the listed short form."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _collect(*marker: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *marker],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    assert proc.returncode == 0 and ids, proc.stdout[-3000:] + proc.stderr[-3000:]
    return ids


def _long_tier():
    sys.path.insert(0, str(REPO / "tests"))
    try:
        import long_tier
    finally:
        sys.path.remove(str(REPO / "tests"))
    return long_tier


@pytest.fixture(scope="module")
def full() -> list[str]:
    return _collect("-m", "full")


def test_every_key_names_a_full_test(full):
    tier = _long_tier()
    for key in tier.CI_KEEPS:
        assert any(tier._matches(key, n) for n in full), (
            f"tests/long_tier.py keeps {key!r} for CI, which matches no test marked full"
        )


@pytest.mark.full  # a second collection of every test
def test_ci_runs_the_kept_full_tests_and_no_other(full):
    """`-m long` is every full test that is not kept: what `scripts/test.sh --full` leaves out."""
    tier = _long_tier()
    long = set(_collect("-m", "long"))
    assert long == {n for n in full if tier.kept(n) is None}
    assert long and len(long) < len(full)
