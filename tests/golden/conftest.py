"""Prints, after the run, how this process's runtime treated each golden .pte
(an informative table; test_golden.py asserts only what was verified)."""

from __future__ import annotations

import pytest

_RESULTS = pytest.StashKey[list]()


@pytest.fixture(scope="session")
def runtime_results(pytestconfig: pytest.Config) -> list[str]:
    """Lines for the summary: one per golden file tried in the current runtime."""
    return pytestconfig.stash.setdefault(_RESULTS, [])


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    results = config.stash.get(_RESULTS, [])
    if results:
        terminalreporter.write_sep("-", "golden .pte files in the current runtime (informative)")
        for line in sorted(results):
            terminalreporter.write_line(line)
