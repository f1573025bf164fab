"""The project's trees of Python code, for the tests that keep a concept with one owner by scanning every
module for a second spelling of it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Made by builds and environments, never the project's own code.
SKIPPED = frozenset({".venv", ".venv-arm", "build", "_skbuild", "__pycache__", ".tox"})


def python_modules(*trees: str) -> list[Path]:
    """Every ``.py`` file under the trees ``trees`` (paths relative to the repository), sorted."""
    return [
        path
        for top in trees
        for path in sorted((ROOT / top).rglob("*.py"))
        if not SKIPPED.intersection(path.relative_to(ROOT).parts)
    ]
