"""Fixtures: export once per session, load the runtime once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import reference_backend  # noqa: E402
from exports import export  # noqa: E402


@pytest.fixture(scope="session")
def runtime():
    """The loaded reference runtime library."""
    return reference_backend.load_runtime()


@pytest.fixture(scope="session")
def exported():
    return export
