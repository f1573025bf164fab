"""The contract blob header has one owner, the kit's codec (``backend_kit.header``): no Python module
outside kit/ spells its magic bytes; they import ``MAGIC``, ``FIELDS``, ``claimed_header_format`` or
``rewrite`` from the kit instead."""

from __future__ import annotations

import ast
from pathlib import Path

from project_trees import ROOT, python_modules

from backend_kit.header import MAGIC

#: Every tree of Python code outside the kit.
SCANNED = (
    "abi_checks",
    "benchmarks",
    "conformance",
    "matrix",
    "reference_backend",
    "scoreboard",
    "scripts",
    "tests",
)


def modules() -> list[Path]:
    return python_modules(*SCANNED)


def spellings(path: Path) -> list[int]:
    """The lines of ``path`` holding a bytes literal that contains the magic."""
    tree = ast.parse(path.read_bytes(), str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, bytes) and MAGIC in node.value
    ]


def test_the_scan_sees_the_suite_and_the_reference_backend():
    paths = {p.relative_to(ROOT).as_posix() for p in modules()}
    assert {
        "conformance/compat/rules.py",
        "matrix/blob_verdicts.py",
        "reference_backend/tests/forge.py",
    } <= paths


def test_no_module_outside_the_kit_spells_the_header_magic():
    found = [f"{p.relative_to(ROOT)}:{line}" for p in modules() for line in spellings(p)]
    assert found == [], f"the header magic spelled outside backend_kit.header (import MAGIC): {found}"


def test_the_check_finds_a_spelled_magic(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(f"def f(blob):\n    return blob[:4] == {MAGIC!r}\n")
    assert spellings(module) == [2]
