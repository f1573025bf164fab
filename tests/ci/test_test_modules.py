"""The test tree's layout: pytest imports test modules by their base name (rootdir-relative "prepend" mode, no
packages), so two test files with the same name in different folders make collection fail."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_no_two_test_modules_share_a_file_name():
    seen: dict[str, list[str]] = defaultdict(list)
    for root in ("tests", "reference_backend/tests"):
        for path in (REPO / root).rglob("test_*.py"):
            if "__pycache__" not in path.parts and not (path.parent / "__init__.py").exists():
                seen[path.name].append(str(path.relative_to(REPO)))
    shared = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not shared, f"rename one of each: {shared}"
