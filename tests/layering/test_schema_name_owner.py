"""The schema name of an FX node's operator has one owner, the kit's ``backend_kit.aot.schema_name``: no
Python module outside it asks a target for its ``name`` method itself (``getattr(target, "name", ...)``
and calling what it returns), so that a fix to the rule (an overload whose ``name()`` raises, a name
that is not a string) lands everywhere at once."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from project_trees import ROOT, python_modules

from backend_kit.aot import schema_name

SCANNED = ("conformance", "reference_backend/python", "kit/backend_kit", "scoreboard", "matrix", "benchmarks")
OWNER = ROOT / "kit" / "backend_kit" / "aot.py"


def modules() -> list[Path]:
    return python_modules(*SCANNED)


def name_lookups(path: Path) -> list[int]:
    """Lines of ``path`` that read ``name`` off a target with getattr (``getattr(node.target, "name",
    None)``): the first line of a hand-written schema-name rule."""
    tree = ast.parse(path.read_bytes(), str(path))
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value == "name"
            and isinstance(node.args[0], (ast.Name, ast.Attribute))
            and (ast.unparse(node.args[0]).endswith("target"))
        ):
            found.append(node.lineno)
    return found


def test_the_scan_sees_the_trees_that_name_operators():
    paths = {p.relative_to(ROOT).as_posix() for p in modules()}
    assert {
        "conformance/models/tasks.py",
        "conformance/vendor/core_tasks.py",
        "reference_backend/python/reference_backend/ops.py",
        "kit/backend_kit/template/python/template_backend/partitioner.py",
    } <= paths
    assert name_lookups(OWNER), "the owner itself must be found by the scan, or the scan finds nothing"


def test_only_the_kit_reads_a_targets_name():
    copies = {
        p.relative_to(ROOT).as_posix(): lines for p in modules() if p != OWNER and (lines := name_lookups(p))
    }
    assert copies == {}, f"import backend_kit.aot.schema_name instead of reading target.name: {copies}"


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        pytest.param("aten::add.Tensor", "aten::add.Tensor", id="an operator overload"),
        pytest.param(None, None, id="operator.getitem"),
        pytest.param("raises", None, id="a name() that wants arguments"),
        pytest.param("not a string", None, id="a name() that returns no string"),
    ],
)
def test_schema_name(target, expected):
    import operator

    import torch

    class NeedsArgs:
        def name(self, x):  # a name method that is not an overload's
            return x

    class NotString:
        def name(self):
            return 3

    made = {
        "aten::add.Tensor": torch.ops.aten.add.Tensor,
        None: operator.getitem,
        "raises": NeedsArgs(),
        "not a string": NotString(),
    }[target]
    assert schema_name(made) == expected
