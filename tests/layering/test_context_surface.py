"""Checks reach the run's shared state only through the Context's public surface: no module outside
conformance/context.py uses a private member of ``Context`` (``ctx._call``, ``ctx._memo``, ...).

The private members are read from context.py itself (its methods and the ``self._x`` it assigns), so a
new one is covered without editing this test."""

from __future__ import annotations

import ast
from pathlib import Path

import conformance

PACKAGE = Path(conformance.__file__).parent
ROOT = PACKAGE.parent
CONTEXT = PACKAGE / "context.py"
#: Where code that may hold a Context lives (the suite, its benchmarks and release matrix, the tests).
SCANNED = ("conformance", "benchmarks", "matrix", "tests")


def private_members(source: str) -> set[str]:
    """The private (one leading underscore, not dunder) methods and attributes of class Context."""
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Context")
    names = set()
    for node in ast.walk(cls):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            names.add(node.attr)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def private_uses(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, member) of every use of one of ``names`` on something other than ``self``: an attribute
    (``ctx._call``, ``Context._shared``) or a getattr/hasattr/setattr with the name spelled out."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in names:
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append((node.lineno, node.attr))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in names
        ):
            found.append((node.lineno, str(node.args[1].value)))
    return found


def test_context_has_the_private_members_this_test_guards():
    names = private_members(CONTEXT.read_text())
    assert {"_memo", "_deadline", "_on_target"} <= names, names
    assert not {"call", "shared", "forget", "capability"} & names


def test_no_private_context_member_is_used_outside_context_py():
    names = private_members(CONTEXT.read_text())
    uses = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            if path == CONTEXT or ".venv" in path.parts:
                continue
            for line, member in private_uses(path.read_text(encoding="utf-8"), names):
                uses.append(f"{path.relative_to(ROOT)}:{line}: {member}")
    assert uses == [], (
        "private Context members used outside conformance/context.py (use its public methods): "
        + "; ".join(uses)
    )


def test_the_scan_finds_each_kind_of_private_use():
    """The detector itself: each way of reaching a private member is found, a Context's own use is not."""
    names = {"_call", "_shared", "_memo"}
    broken = (
        "ctx._call('execute', what='x')\n"
        "self.ctx._shared(('k',), compute)\n"
        "Context._call(ctx, 'ping', what='p')\n"
        "getattr(ctx, '_memo').forget(('k',))\n"
        "run = ctx._memo\n"
    )
    assert sorted(private_uses(broken, names)) == [
        (1, "_call"),
        (2, "_shared"),
        (3, "_call"),
        (4, "_memo"),
        (5, "_memo"),
    ]
    assert private_uses("self._memo.forget(key)\nctx.call('ping', what='p')\nctx.shared(k, f)\n", names) == []
