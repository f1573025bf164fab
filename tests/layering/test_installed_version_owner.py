"""The installed version of a distribution is looked up in one place,
``conformance.version_numbers.installed_version``: no other module of the suite, the scoreboard's judge side or
the matrix calls ``importlib.metadata.version`` itself, so that "not installed" means None everywhere."""

from __future__ import annotations

import ast
from pathlib import Path

from project_trees import ROOT, python_modules

from conformance.version_numbers import installed_version

OWNER = ROOT / "conformance" / "version_numbers.py"
#: module -> why it looks a version up itself
ALLOWED = {
    "scoreboard/wheel.py": (
        "imported by the scoreboard's descriptors in the vendor's environment, where only the vendor's "
        "packages are sure to be installed; executorch missing there is an error, not None"
    ),
}


def lookups(path: Path) -> list[int]:
    """Lines of ``path`` calling ``<something>metadata.version(...)`` or ``md.version(...)``."""
    tree = ast.parse(path.read_bytes(), str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "version"
        and ast.unparse(node.func.value).endswith(("metadata", "md"))
    ]


def test_only_the_owner_looks_up_an_installed_version():
    assert lookups(OWNER), "the owner must be found by the scan, or the scan finds nothing"
    copies = {
        rel: lines
        for p in python_modules("conformance", "scoreboard", "matrix", "benchmarks")
        if p != OWNER and (rel := p.relative_to(ROOT).as_posix()) not in ALLOWED and (lines := lookups(p))
    }
    assert copies == {}, f"use conformance.version_numbers.installed_version: {copies}"


def test_installed_version():
    assert installed_version("executorch-conformance")
    assert installed_version("no-such-distribution-anywhere") is None
