"""A backend's identity, stated once in its Python package and generated for its C++ runtime.

A backend states who it is in its package's version module: ``__version__``, ``BACKEND_ID`` (the
name stored in every .pte), ``DISTRIBUTION`` (as users install it) and ``BLOB_FORMAT`` ((major, minor)
of the payload preprocess writes); optionally its operator table in another module: ``OPS``, an
operator's schema name -> its opcode in the payload. ``backend_kit_add_backend(... IDENTITY version.py
OPS ops.py)`` (cmake/BackendKit.cmake) runs

    python -m backend_kit.identity VERSION_PY [--ops OPS_PY] --header OUT.h [--cmake OUT.cmake]

at configure time (OUT.cmake sets BACKEND_IDENTITY_VERSION, the project's version), and the runtime includes ``backend_identity.h``: the same values as C++ constants
in ``namespace backend_identity`` (``kBackendId``, ``kDistribution``, ``kVersion``, ``kBlobFormatMajor``,
``kBlobFormatMinor``, and ``enum Op`` with one enumerator per operator: ``aten::add.Tensor`` ->
``kAtenAddTensor``). The modules are read as data (the literal values of their top-level assignments),
never imported: the build needs none of the package's dependencies, and a value that is not a literal
is an error naming the file and the name.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

#: The names the version module must assign, and what each must be.
REQUIRED = {
    "__version__": "a version string x.y.z",
    "BACKEND_ID": "an identifier (the BackendDetails class name)",
    "DISTRIBUTION": "a distribution name",
    "BLOB_FORMAT": "a (major, minor) pair of integers",
}


class IdentityError(ValueError):
    """A version or operator module that does not state the identity as this module documents."""


def literals(path: Path) -> dict[str, object]:
    """The literal values of the top-level ``NAME = value`` assignments of the module at ``path``."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        raise IdentityError(f"{path}: cannot read it as Python: {exc}") from None
    found: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name):
            try:
                found[target.id] = ast.literal_eval(value)
            except ValueError:
                found[target.id] = ValueError  # not a literal: an error only if the name is wanted
    return found


def _wanted(values: dict[str, object], name: str, path: Path) -> object:
    value = values.get(name)
    if value is None or value is ValueError:
        raise IdentityError(f"{path}: {name} must be assigned a literal: {REQUIRED.get(name, 'a dict')}")
    return value


def identity(version_py: Path) -> dict[str, object]:
    """The identity the version module at ``version_py`` states, checked."""
    values = literals(version_py)
    found = {name: _wanted(values, name, version_py) for name in REQUIRED}
    checks = {
        "__version__": lambda v: isinstance(v, str) and re.fullmatch(r"\d+\.\d+\.\d+", v),
        "BACKEND_ID": lambda v: isinstance(v, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v),
        "DISTRIBUTION": lambda v: isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", v),
        "BLOB_FORMAT": lambda v: (
            isinstance(v, tuple) and len(v) == 2 and all(isinstance(n, int) and 0 <= n < 1 << 16 for n in v)
        ),
    }
    for name, ok in checks.items():
        if not ok(found[name]):
            raise IdentityError(f"{version_py}: {name} = {found[name]!r} is not {REQUIRED[name]}")
    return found


def enumerator(schema: str) -> str:
    """The C++ enumerator of an operator: ``aten::add.Tensor`` -> ``kAtenAddTensor``."""
    words = re.split(r"[^A-Za-z0-9]+", schema)
    return "k" + "".join(w[:1].upper() + w[1:] for w in words if w)


def operators(ops_py: Path) -> dict[str, int]:
    """The ``OPS`` table of the module at ``ops_py``, checked: distinct opcodes and enumerators."""
    table = _wanted(literals(ops_py), "OPS", ops_py)
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and 0 <= v < 1 << 32 for k, v in table.items()
    ):
        raise IdentityError(f"{ops_py}: OPS must map schema names (str) to opcodes (unsigned 32-bit ints)")
    for what, keys in (("opcode", list(table.values())), ("enumerator", [enumerator(k) for k in table])):
        twice = sorted({str(k) for k in keys if keys.count(k) > 1})
        if twice:
            raise IdentityError(f"{ops_py}: OPS gives two operators the same {what}: {', '.join(twice)}")
    return table


def header(version_py: Path, ops_py: Path | None = None) -> str:
    """The text of backend_identity.h for the modules at ``version_py`` and ``ops_py``."""
    found = identity(version_py)
    sources = f"{version_py.name}" + (f" and {ops_py.name}" if ops_py else "")
    blob_format = found["BLOB_FORMAT"]
    assert isinstance(blob_format, tuple)  # identity() checked it
    major, minor = blob_format
    lines = [
        f"// Generated by backend_kit.identity from {sources}: edit those, not this file.",
        "#pragma once",
        "",
        "#include <cstdint>",
        "",
        "namespace backend_identity {",
        "",
        f'constexpr const char* kBackendId = "{found["BACKEND_ID"]}";',
        f'constexpr const char* kDistribution = "{found["DISTRIBUTION"]}";',
        f'constexpr const char* kVersion = "{found["__version__"]}";',
        f"constexpr uint16_t kBlobFormatMajor = {major};",
        f"constexpr uint16_t kBlobFormatMinor = {minor};",
    ]
    if ops_py is not None:
        table = operators(ops_py)
        members = ", ".join(f"{enumerator(k)} = {v}" for k, v in table.items())
        lines += [
            "",
            f"// {ops_py.name}'s OPS: schema name -> opcode.",
            f"enum Op : uint32_t {{ {members} }};",
        ]
    lines += ["", "}  // namespace backend_identity", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m backend_kit.identity", description=__doc__.splitlines()[0]
    )
    parser.add_argument("version_py", type=Path, help="the package's version module")
    parser.add_argument("--ops", type=Path, help="the module holding OPS (schema name -> opcode)")
    parser.add_argument("--header", type=Path, required=True, help="the C++ header to write")
    parser.add_argument("--cmake", type=Path, help="a CMake file setting BACKEND_IDENTITY_VERSION")
    args = parser.parse_args(argv)
    try:
        text = header(args.version_py, args.ops)
        version = identity(args.version_py)["__version__"]
    except IdentityError as exc:
        print(f"backend_kit.identity: {exc}", file=sys.stderr)
        return 2
    _write(args.header, text)
    if args.cmake is not None:
        _write(args.cmake, f'set(BACKEND_IDENTITY_VERSION "{version}")\n')
    return 0


def _write(path: Path, text: str) -> None:
    """Writes ``text`` unless ``path`` holds it already (an unchanged header rebuilds nothing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
