"""The golden vendor descriptors (tests/api/golden/suite_*/) are importable by the tests here and by
the processes they start (the suite's CLI and its vendor processes)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"

if str(GOLDEN) not in sys.path:
    sys.path.insert(0, str(GOLDEN))
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(GOLDEN), *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
)
