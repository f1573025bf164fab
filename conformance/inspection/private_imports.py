"""The scanner behind PKG-2: which private executorch modules a vendor's Python sources reach.

Reads sources with ``ast`` (nothing is imported) and reports, per file and line, every module of
``executorch`` with a path component that starts with ``_`` that the code reaches through

- ``import m`` and ``from m import n`` (as ``m.n``);
- ``__import__(S)``, ``importlib.import_module(S[, P])`` (relative names resolved against P);
- ``importlib.util.find_spec(S)``;
- ``sys.modules[S]`` and ``sys.modules.get(S)`` / ``.pop(S)`` / ``.setdefault(S, ...)``;

where ``S`` is a string the file spells out: a literal, a name bound once to a literal in that
file (``NAME = "executorch.extension.pybindings._portable_lib"``), or a ``+`` of such pieces.
The aliases ``import importlib as il``, ``from importlib import import_module as im``,
``from importlib.util import find_spec``, ``from importlib import util``, ``import sys as s`` and
``from sys import modules`` are followed. A name computed at run time (read from a file, built
in a loop) is not seen.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path


def _private(component: str) -> bool:
    """A leading underscore marks a private name; dunders (__version__) are public."""
    return component.startswith("_") and not (component.startswith("__") and component.endswith("__"))


#: Private modules vendors commonly import, and what to use instead (verified in the executorch 1.5.1 wheel).
PUBLIC_ALTERNATIVES = {
    "executorch.exir.dialects._ops": (
        "no public module defines these operator namespaces (exir_ops) in executorch 1.5.1; match a node's "
        "operator by its schema name instead: node.target.name() is 'aten::add.Tensor' for "
        "exir_ops.edge.aten.add.Tensor, and torch.ops.aten.add.Tensor is the ATen overload"
    ),
    "executorch.exir._serialize._named_data_store.NamedDataStoreOutput": (
        "import NamedDataStoreOutput from the public executorch.exir.backend.backend_details"
    ),
    "executorch.exir._serialize._named_data_store": (
        "there is no public NamedDataStore; build PreprocessResult.data_store_output from "
        "executorch.exir.backend.backend_details.NamedDataStoreOutput (docs/contract.md, Named data)"
    ),
    "executorch.extension.pybindings._portable_lib": (
        "load programs through the public executorch.runtime (Runtime.get().load_program) and check "
        "registered backends with Runtime.get().backend_registry; the extension module's name changed "
        "(_portable_lib up to 1.4, _C in 1.5)"
    ),
}


def public_alternative(module: str) -> str | None:
    for private, advice in PUBLIC_ALTERNATIVES.items():
        if module == private or module.startswith(private + "."):
            return advice
    return None


def is_private_executorch(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "executorch" and any(_private(p) for p in parts[1:])


class _Names:
    """What the names of one file stand for: aliases of importlib/sys and string constants."""

    def __init__(self, tree: ast.AST) -> None:
        self.importlib = {"importlib"}
        self.importlib_util: set[str] = set()  # names bound to the module importlib.util
        self.import_module: set[str] = set()
        self.find_spec: set[str] = set()
        self.sys = {"sys"}
        self.modules: set[str] = set()  # names bound to sys.modules
        assigned: dict[str, list[ast.expr | None]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "importlib" and a.asname:
                        self.importlib.add(a.asname)
                    elif a.name == "importlib.util":
                        if a.asname:
                            self.importlib_util.add(a.asname)
                    elif a.name == "sys" and a.asname:
                        self.sys.add(a.asname)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                for a in node.names:
                    bound = a.asname or a.name
                    if node.module == "importlib" and a.name == "import_module":
                        self.import_module.add(bound)
                    elif node.module == "importlib" and a.name == "util":
                        self.importlib_util.add(bound)
                    elif node.module == "importlib.util" and a.name == "find_spec":
                        self.find_spec.add(bound)
                    elif node.module == "sys" and a.name == "modules":
                        self.modules.add(bound)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        assigned.setdefault(target.id, []).append(node.value)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                assigned.setdefault(node.target.id, []).append(node.value)
            elif isinstance(node, (ast.AugAssign, ast.NamedExpr)):
                target = node.target
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(None)  # rebound: not a constant
        self._values = {name: values[0] for name, values in assigned.items() if len(values) == 1}
        self._resolving: set[str] = set()

    def string(self, node: ast.expr | None) -> str | None:
        """The string ``node`` always evaluates to in this file, or None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.string(node.left), self.string(node.right)
            return left + right if left is not None and right is not None else None
        if isinstance(node, ast.Name) and node.id in self._values and node.id not in self._resolving:
            self._resolving.add(node.id)
            try:
                return self.string(self._values[node.id])
            finally:
                self._resolving.discard(node.id)
        return None

    def _is(self, node: ast.expr, names: set[str], module_names: set[str], attr: str) -> bool:
        """``node`` is one of ``names``, or ``M.attr`` for M one of ``module_names``."""
        if isinstance(node, ast.Name):
            return node.id in names
        return (
            isinstance(node, ast.Attribute) and node.attr == attr and self._module(node.value, module_names)
        )

    def _module(self, node: ast.expr, names: set[str]) -> bool:
        return isinstance(node, ast.Name) and node.id in names

    def _is_util(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.importlib_util
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "util"
            and self._module(node.value, self.importlib)
        )

    def _is_sys_modules(self, node: ast.expr) -> bool:
        return self._is(node, self.modules, self.sys, "modules")

    def reached(self, node: ast.AST) -> str | None:
        """The module a call or subscript reaches by name, or None."""
        if isinstance(node, ast.Subscript) and self._is_sys_modules(node.value):
            return self.string(node.slice)
        if not isinstance(node, ast.Call) or not node.args:
            return None
        func, first = node.func, node.args[0]
        if (
            isinstance(func, ast.Attribute)
            and func.attr in ("get", "pop", "setdefault", "__getitem__")
            and self._is_sys_modules(func.value)
        ):
            return self.string(first)
        if isinstance(func, ast.Name) and func.id == "__import__":
            return self.string(first)
        is_find_spec = self._is(func, self.find_spec, set(), "find_spec") or (
            isinstance(func, ast.Attribute) and func.attr == "find_spec" and self._is_util(func.value)
        )
        is_import_module = self._is(func, self.import_module, self.importlib, "import_module")
        if not (is_find_spec or is_import_module):
            return None
        name = self.string(first)
        if name is None or not name.startswith("."):
            return name
        package = (
            node.args[1]
            if len(node.args) > 1
            else next((k.value for k in node.keywords if k.arg == "package"), None)
        )
        package_name = self.string(package)
        if package_name is None:
            return None
        try:
            return importlib.util.resolve_name(name, package_name)
        except (ImportError, ValueError):
            return None


def _python_files(location: Path) -> list[Path]:
    return [location] if location.is_file() else sorted(location.rglob("*.py"))


def private_imports(location: Path) -> list[str]:
    """'file:line: module' for each private executorch module a package directory or a single
    module file reaches (see the module docstring), with the public alternative where one exists."""
    found = []
    base = location.parent
    for path in _python_files(location):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
            found.append(f"{path}: cannot be parsed ({exc})")
            continue
        names = _Names(tree)
        hits = []
        for node in ast.walk(tree):
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, (ast.Call, ast.Subscript)):
                name = names.reached(node)
                modules = [name] if name else []
            for module in modules:
                if is_private_executorch(module):
                    hits.append((getattr(node, "lineno", 0), getattr(node, "col_offset", 0), module))
        for lineno, _col, module in sorted(hits):
            advice = public_alternative(module)
            line = f"{path.relative_to(base)}:{lineno or '?'}: {module}"
            found.append(f"{line} ({advice})" if advice else line)
    return found
