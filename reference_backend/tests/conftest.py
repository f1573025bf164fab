"""Fixtures: export once per session, load the runtime once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from exports import export

import reference_backend


@pytest.fixture(scope="session")
def runtime():
    """The loaded reference runtime library."""
    return reference_backend.load_runtime()


@pytest.fixture(scope="session")
def exported():
    return export
