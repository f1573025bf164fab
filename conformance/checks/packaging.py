"""Packaging checks: the vendor distribution and its imports."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
from pathlib import Path

from packaging.requirements import Requirement

from conformance.context import Context
from conformance.outcomes import SHOULD, CheckFailed, ensure
from conformance.registry import check


def _distribution(ctx: Context) -> importlib.metadata.Distribution:
    try:
        return importlib.metadata.distribution(ctx.descriptor.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise CheckFailed(f"distribution {ctx.descriptor.distribution!r} is not installed in this environment") from None


@check("PKG-1", "C-PKG-1", "the distribution requires executorch with a lower and an upper bound")
def bounded_executorch_requirement(ctx: Context) -> None:
    dist = _distribution(ctx)
    reqs = [Requirement(r) for r in dist.requires or []]
    et = [r for r in reqs if r.name.lower().replace("_", "-") == "executorch" and not r.marker]
    ensure(bool(et), f"{ctx.descriptor.distribution} does not declare a requirement on executorch")
    operators = {s.operator for r in et for s in r.specifier}
    has_upper = bool(operators & {"<", "<=", "==", "~=", "==="})
    has_lower = bool(operators & {">", ">=", "==", "~=", "==="})
    ensure(
        has_upper and has_lower,
        f"{ctx.descriptor.distribution} requires {', '.join(str(r) for r in et)}: it needs both a lower and an "
        "upper bound (for example executorch>=1.5,<1.6), because the backend is built for given releases",
    )


def _private(component: str) -> bool:
    """A leading underscore marks a private name; dunders (__version__) are public."""
    return component.startswith("_") and not (component.startswith("__") and component.endswith("__"))


def private_imports(package_dir: Path) -> list[str]:
    """'file:line: module' for each import of a private executorch module."""
    found = []
    for path in sorted(package_dir.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError) as exc:
            found.append(f"{path}: cannot be parsed ({exc})")
            continue
        for node in ast.walk(tree):
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [f"{node.module}.{a.name}" for a in node.names]
            for module in modules:
                parts = module.split(".")
                if parts[0] == "executorch" and any(_private(p) for p in parts[1:]):
                    found.append(f"{path.relative_to(package_dir.parent)}:{node.lineno}: {module}")
    return found


@check("PKG-2", "C-PKG-2", "the vendor package imports only public executorch modules")
def public_imports_only(ctx: Context) -> None:
    spec = importlib.util.find_spec(ctx.descriptor.python_package)
    ensure(
        spec is not None and bool(spec.submodule_search_locations),
        f"package {ctx.descriptor.python_package!r} cannot be found",
    )
    found = [line for loc in spec.submodule_search_locations for line in private_imports(Path(loc))]
    ensure(
        not found,
        "private executorch modules (a path component starting with '_') are imported, which may change "
        "in any release: " + "; ".join(found),
    )


@check("PKG-3", "C-PKG-3", "the descriptor's version is the installed distribution's version", level=SHOULD)
def version_matches_distribution(ctx: Context) -> None:
    installed = _distribution(ctx).version
    ensure(
        installed == ctx.descriptor.version,
        f"the descriptor says version {ctx.descriptor.version}, {ctx.descriptor.distribution} {installed} is installed",
    )
