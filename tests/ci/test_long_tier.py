"""The long tier's list (tests/long_tier.py) names tests that exist, and every module it takes tests from
keeps at least one in the tiers CI runs: CI runs a short form of each slow family, never none of it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def collected() -> list[str]:
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
            "no:randomly",
        ],
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


def test_every_entry_names_a_collected_test(collected):
    tier = _long_tier()
    for key in tier.LONG:
        matches = [n for n in collected if n == key or (key.endswith("[") and n.startswith(key))]
        assert matches, f"tests/long_tier.py lists {key!r}, which matches no collected test"


def test_every_module_keeps_a_test_in_the_tiers_ci_runs(collected):
    tier = _long_tier()
    long_modules = {n.split("::")[0] for n in collected if tier.reason(n)}
    assert long_modules
    for module in long_modules:
        kept = [n for n in collected if n.startswith(module + "::") and not tier.reason(n)]
        assert kept, f"every test of {module} is in the long tier: CI would run none of its family"


@pytest.mark.full  # a second collection of every test
def test_the_long_marker_reaches_pytest(collected):
    """`-m "not long"` (scripts/test.sh --full) leaves out exactly the listed tests."""
    tier = _long_tier()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "long", "-p", "no:cacheprovider"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    marked = {line for line in proc.stdout.splitlines() if "::" in line}
    assert marked == {n for n in collected if tier.reason(n)}
