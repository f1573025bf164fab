"""The scoreboard's tests run the suite the way tests/conformance does (suite_runner)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "conformance"))
