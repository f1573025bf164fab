"""Packaging checks: the vendor distribution, its imports and its runtime libraries' paths.

They read files only (metadata, sources, ELF headers) and run in the pytest process.
"""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import importlib.util
import os
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from conformance.context import Context
from conformance.inspection.private_imports import private_imports  # PKG-2's scanner
from conformance.outcomes import SHOULD, CheckFailed, NotApplicable, ensure
from conformance.registry import check


def _distribution(ctx: Context) -> importlib.metadata.Distribution:
    try:
        return importlib.metadata.distribution(ctx.descriptor.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise CheckFailed(
            f"distribution {ctx.descriptor.distribution!r} is not installed in this environment"
        ) from None


def _unmarked_executorch_requirements(dist: importlib.metadata.Distribution) -> list[Requirement]:
    reqs = [Requirement(r) for r in dist.requires or []]
    return [r for r in reqs if r.name.lower().replace("_", "-") == "executorch" and not r.marker]


#: Versions probed to find what a specifier admits: every X.Y.Z up to these bounds, and far beyond.
_PROBE_MAJORS, _PROBE_MINORS, _PROBE_PATCHES = 4, 41, 21
_FAR = ("99.0.0", "999.999.999")


def admitted_minors(specifier: SpecifierSet) -> list[tuple[int, int]]:
    """The (major, minor) release series of which ``specifier`` admits at least one final release.

    Computed by asking the specifier about every X.Y.Z for X < 4, Y < 41, Z < 21 and a
    few far versions (which stand in for "no upper bound"), not by reading its operators.
    """
    found: dict[tuple[int, int], None] = {}
    for major in range(_PROBE_MAJORS):
        for minor in range(_PROBE_MINORS):
            if any(Version(f"{major}.{minor}.{patch}") in specifier for patch in range(_PROBE_PATCHES)):
                found[(major, minor)] = None
    for far in _FAR:
        if Version(far) in specifier:
            major, minor = Version(far).release[:2]
            found[(major, minor)] = None
    return list(found)


def requirement_problem(specifier: SpecifierSet, spelled: str) -> str | None:
    """Why an executorch requirement ``spelled`` (its SpecifierSet ``specifier``) is not pinned to
    one minor release, or None. ``~=1.5`` admits 1.5 to 1.x; ``~=1.5.0`` and ``>=1.5,<1.6`` admit 1.5 only."""
    fix = (
        "pin the one minor release the runtime library is built for, for example executorch>=1.5,<1.6 "
        "or executorch~=1.5.0 (docs/version-policy.md)"
    )
    minors = admitted_minors(specifier)
    if not minors:
        return f"{spelled} admits no executorch release at all: {fix}"
    if Version(_FAR[-1]) in specifier:
        return f"{spelled} has no upper bound (it admits executorch {_FAR[-1]}): {fix}"
    if len(minors) > 1:
        first, last, second = minors[0], minors[-1], minors[1]
        open_ended = last[1] == _PROBE_MINORS - 1
        first_text = f"{first[0]}.{first[1]}"
        span = f"{first_text} to {last[0]}.{'x' if open_ended else last[1]}"
        hint = ""
        for spec in specifier:
            if spec.operator == "~=" and len(Version(spec.version).release) == 2:
                v = Version(spec.version)
                hint = f" ({spec} means >={v},<{v.major + 1}; ~={v}.0 means >={v}.0,<{v.major}.{v.minor + 1})"
        if Version("0.0.0") in specifier:
            return (
                f"{spelled} has no lower bound: it admits {span.replace(first_text, '0.0.0', 1)} "
                f"(executorch {second[0]}.{second[1]} among them): {fix}"
            )
        return (
            f"{spelled} admits more than one minor release, {span} (executorch {second[0]}.{second[1]} among "
            f"them){hint}, but a runtime library is built for one: {fix}"
        )
    return None


def require_out_of_tree(ctx: Context, what: str) -> None:
    """NotApplicable for a backend that ships inside the executorch distribution itself (ExecuTorch's own
    delegates: XNNPACK, OpenVINO, QNN), for which ``what`` is ExecuTorch's own business (C-PKG-1, C-PKG-2)."""
    if ctx.descriptor.distribution.lower().replace("_", "-") == "executorch":
        raise NotApplicable(
            f"the backend ships inside the executorch distribution itself ({ctx.descriptor.python_package}), "
            f"so {what}; the clause is for backends shipped outside it"
        )


@check("PKG-1", "C-PKG-1", "the distribution's executorch requirement admits exactly one minor release")
def bounded_executorch_requirement(ctx: Context) -> None:
    require_out_of_tree(ctx, "it is always of the release of the runtime it runs in")
    dist = _distribution(ctx)
    et = _unmarked_executorch_requirements(dist)
    ensure(bool(et), f"{ctx.descriptor.distribution} does not declare a requirement on executorch")
    combined = SpecifierSet()
    for r in et:
        combined &= r.specifier
    spelled = ", ".join(str(r) for r in et)
    problem = requirement_problem(combined, spelled)
    ensure(problem is None, f"{ctx.descriptor.distribution} requires {problem}")


@check("PKG-2", "C-PKG-2", "the vendor package imports only public executorch modules")
def public_imports_only(ctx: Context) -> None:
    require_out_of_tree(ctx, "executorch's private modules are its own, changed with it in each release")
    name = ctx.descriptor.python_package
    from conformance.judge.environment import vendor_import_path

    try:  # found on the vendor's import path (its PYTHONPATH, its .pth directories), never imported here
        if "." in name:
            spec = importlib.util.find_spec(name)
        else:
            spec = importlib.machinery.PathFinder.find_spec(name, vendor_import_path())
    except (ImportError, ValueError) as exc:
        raise CheckFailed(f"package {name!r} cannot be found: {exc}") from None
    if spec is None:
        raise CheckFailed(f"package or module {name!r} cannot be found")
    if spec.submodule_search_locations:
        locations = [Path(loc) for loc in spec.submodule_search_locations]
    elif spec.origin and spec.origin.endswith(".py"):
        locations = [Path(spec.origin)]  # a single-module vendor
    else:
        raise CheckFailed(
            f"{name!r} is neither a package nor a Python source module (found {spec.origin}), so its imports "
            "cannot be read"
        )
    found = [line for loc in locations for line in private_imports(loc)]
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


def _runtime_libraries(ctx: Context) -> list[Path]:
    try:
        return [Path(p) for p in ctx.descriptor.runtime_libraries()]
    except Exception as exc:  # noqa: BLE001  what the vendor's code raised (recorded in the vendor process)
        from conformance.descriptor import raised

        raise CheckFailed(f"the descriptor's runtime_libraries() raised {raised(exc)}") from None


def _read(path: Path):
    from conformance.inspection.library_paths import UnreadableLibrary, read_library

    try:
        return read_library(path)
    except UnreadableLibrary as exc:
        raise CheckFailed(f"runtime library {exc}") from None


_RUNPATH_FIX = (
    "a library installed from a wheel must find its dependencies through $ORIGIN-relative entries inside "
    "the environment (executorch's CMake targets add the absolute path of the build environment's "
    "executorch/lib: see docs/out-of-tree-guide.md, step 6)"
)


def runpath_problems(library: Path, roots: list[Path]) -> list[str]:
    """One line per RPATH/RUNPATH entry of ``library`` that leaves the environment ``roots``."""
    from conformance.inspection.library_paths import expand, inside

    info = _read(library)
    origin = library.resolve().parent
    problems = []
    for kind, entries in (("RPATH", info.rpath), ("RUNPATH", info.runpath)):
        for entry in entries:
            where = expand(entry, origin)
            if where is None:
                problems.append(
                    f"{library}: {kind} entry {entry!r} is relative to the current directory of "
                    "whatever process loads it"
                )
            elif not inside(where, roots):
                how = "escapes the environment: it is" if "ORIGIN" in entry else "is an absolute path"
                problems.append(
                    f"{library}: {kind} entry {entry!r} {how} {where}, outside the installed "
                    f"environment {sys.prefix}"
                )
    return problems


def _existing_runtime_libraries(ctx: Context) -> list[Path]:
    """The descriptor's runtime libraries; CheckFailed naming any that does not exist."""
    libraries = _runtime_libraries(ctx)
    missing = [str(p) for p in libraries if not p.is_file()]
    ensure(not missing, f"runtime_libraries() names {', '.join(missing)}, which does not exist")
    return libraries


def _engine_libraries(ctx: Context) -> list[Path]:
    """The libraries the runtime library opens itself (``engine_libraries()``); CheckFailed naming any that
    does not exist, or what the descriptor's code raised."""
    from conformance.descriptor import raised

    try:
        libraries = [Path(p) for p in ctx.descriptor.engine_libraries()]
    except Exception as exc:  # noqa: BLE001  what the vendor's code raised (recorded in the vendor process)
        raise CheckFailed(f"the descriptor's engine_libraries() raised {raised(exc)}") from None
    missing = [str(p) for p in libraries if not p.is_file()]
    ensure(
        not missing,
        f"engine_libraries() names {', '.join(missing)}, which does not exist: the runtime library would "
        "fail to open it",
    )
    return libraries


def _dlopen_note(ctx: Context, libraries: list[Path]) -> str | None:
    """A note for runtime libraries that call dlopen while the descriptor names no engine library."""
    from conformance.inspection.library_paths import calls_dlopen

    if ctx.descriptor.engine_libraries():
        return None
    opening = [p.name for p in libraries if calls_dlopen(p)]
    if not opening:
        return None
    return (
        f"{', '.join(opening)} calls dlopen: the libraries it opens itself are not checked unless the descriptor "
        "names them in engine_libraries()"
    )


def _notes(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


@check("PKG-5", "C-PKG-5", "the runtime libraries' RPATH and RUNPATH stay inside the installed environment")
def runpath_inside_environment(ctx: Context) -> str | None:
    from conformance.inspection.library_paths import environment_roots

    libraries = _existing_runtime_libraries(ctx)
    engines = _engine_libraries(ctx)
    if not libraries and not engines:
        return "the descriptor names no runtime library, so there is no RUNPATH to check"
    roots = environment_roots()
    problems = [line for lib in [*libraries, *engines] for line in runpath_problems(lib, roots)]
    ensure(not problems, "; ".join(problems) + f": {_RUNPATH_FIX}")
    checked = f"engine libraries checked too: {', '.join(p.name for p in engines)}" if engines else None
    return _notes(checked, _dlopen_note(ctx, libraries))


def needed_problems(
    library: Path, roots: list[Path], loaded: dict[str, str] | None = None, notes: list[str] | None = None
) -> list[str]:
    """One line per NEEDED library of ``library`` that the loader finds neither in the
    environment ``roots`` nor in the system's library directories. ``loaded``: the libraries already in
    the process when ``library`` is loaded (``library_paths.loaded_closure``); a NEEDED library found only
    among them is appended to ``notes``, naming the library it resolves to."""
    from conformance.inspection.library_paths import inside, resolve_needed, system_dirs

    system = [Path(os.path.realpath(d)) for d in system_dirs()]
    problems = []
    for r in resolve_needed(_read(library), loaded):
        if r.path is None:
            problems.append(
                f"{library}: NEEDED {r.name} is found neither through its RPATH/RUNPATH nor in "
                "the system's library directories, nor among the libraries loaded before it (LD_LIBRARY_PATH "
                "does not count: users do not have yours)"
            )
        elif not (inside(r.path, roots) or inside(r.path, system)):
            problems.append(
                f"{library}: NEEDED {r.name} resolves to {r.path} (through {r.via}), outside the "
                f"installed environment {sys.prefix} and the system's library directories"
            )
        elif r.via == "loaded" and notes is not None:
            notes.append(
                f"{library.name}: NEEDED {r.name} resolves only through load order, to {r.path}, already loaded "
                "when it is"
            )
    return problems


@check("PKG-6", "C-PKG-6", "the runtime libraries' NEEDED libraries resolve in the environment or the system")
def needed_resolve_inside(ctx: Context) -> str | None:
    from conformance.inspection.library_paths import (
        environment_roots,
        executorch_runtime_libraries,
        loaded_closure,
    )

    libraries = _existing_runtime_libraries(ctx)
    engines = _engine_libraries(ctx)
    if not libraries and not engines:
        return "the descriptor names no runtime library, so there is no NEEDED entry to check"
    roots = environment_roots()
    # Load order: ExecuTorch's Python runtime first, then the runtime libraries in the order named, then
    # the engine libraries (opened by the runtime libraries once they are loaded).
    loaded = loaded_closure(executorch_runtime_libraries())
    problems: list[str] = []
    notes: list[str] = []
    for lib in [*libraries, *engines]:
        problems += needed_problems(lib, roots, loaded, notes)
        loaded = loaded_closure([lib], loaded)
    ensure(not problems, "; ".join(problems))
    checked = f"engine libraries checked too: {', '.join(p.name for p in engines)}" if engines else None
    return _notes(checked, *notes, _dlopen_note(ctx, libraries))


def installed_wheel(dist: importlib.metadata.Distribution) -> Path | None:
    """The wheel file ``dist`` was installed from, if pip recorded one (direct_url.json) and it is still there."""
    import json
    import urllib.parse
    import urllib.request

    try:
        data = json.loads(dist.read_text("direct_url.json") or "null")
    except (ValueError, OSError):
        return None
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str) or not url.startswith("file:") or not url.endswith(".whl"):
        return None
    path = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
    return path if path.is_file() else None


_LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def _glibc_of(platform_tag: str) -> tuple[tuple[int, int], str] | None:
    """((major, minor), arch) of a manylinux platform tag, None for any other tag."""
    import re

    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", platform_tag)
    if m:
        return (int(m.group(1)), int(m.group(2))), m.group(3)
    m = re.fullmatch(r"(manylinux1|manylinux2010|manylinux2014)_(\w+)", platform_tag)
    if m:
        return _LEGACY_MANYLINUX[m.group(1)], m.group(2)
    return None


def audit_wheel(wheel: Path) -> dict:
    """``auditwheel show --json`` of ``wheel``; raises CheckFailed when auditwheel cannot analyse it."""
    import json
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", "--json", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise CheckFailed(f"auditwheel cannot analyse {wheel.name}: {tail[0]}") from None
    if not isinstance(data, dict):
        raise CheckFailed(f"auditwheel gave no analysis of {wheel.name}")
    return data


def wheel_tag_problems(wheel: Path, audit: dict, provided: set[str]) -> tuple[list[str], str]:
    """(problems, summary) comparing the platform tags of ``wheel``'s name with ``audit``
    (auditwheel's analysis). ``provided``: library names the environment's other distributions
    provide (executorch's libexecutorch.so), which the wheel may depend on without grafting them."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        _, _, _, tags = parse_wheel_filename(wheel.name)
    except InvalidWheelFilename as exc:
        return [f"{wheel.name} is not a valid wheel file name ({exc})"], ""
    external = {
        name: path for name, path in (audit.get("external_libs") or {}).items() if name not in provided
    }
    sym_tag = audit.get("sym_tag") or audit.get("overall_tag") or "?"
    found = _glibc_of(sym_tag)
    summary = f"auditwheel: symbol versions need {sym_tag}"
    if provided & set(audit.get("external_libs") or {}):
        summary += (
            f"; {', '.join(sorted(provided & set(audit['external_libs'])))} come from other "
            "distributions in the environment"
        )
    problems = []
    for platform_tag in sorted({t.platform for t in tags}):
        claimed = _glibc_of(platform_tag)
        if platform_tag == "any":
            problems.append(
                f"{wheel.name} is tagged for any platform but holds ELF libraries "
                f"(auditwheel: {audit.get('overall_tag')})"
            )
        elif claimed is None:
            continue  # linux_<arch>: a local build that promises no portability
        elif external:
            libs = ", ".join(f"{n} ({p or 'not found'})" for n, p in sorted(external.items()))
            problems.append(
                f"{wheel.name} is tagged {platform_tag}, but it needs {libs}, which no "
                f"{platform_tag} system provides (auditwheel: consistent with "
                f"{audit.get('overall_tag')} only)"
            )
        elif found is None or found[1] != claimed[1] or found[0] > claimed[0]:
            problems.append(
                f"{wheel.name} is tagged {platform_tag}, but auditwheel finds its symbol versions "
                f"need {sym_tag}: pip would install it on systems where it fails to load; tag it "
                f"{sym_tag} or build it on an older glibc (a manylinux image)"
            )
    return problems, summary


@check("PKG-7", "C-PKG-7", "the vendor wheel's platform tag is the one auditwheel finds for it", level=SHOULD)
def wheel_platform_tag(ctx: Context) -> str | None:
    from conformance.inspection.library_paths import environment_roots, inside, read_library, resolve_needed

    dist = _distribution(ctx)
    wheel = installed_wheel(dist)
    if wheel is None:
        raise NotApplicable(
            f"{ctx.descriptor.distribution} was not installed from a wheel file that is still on this machine "
            "(pip records one in direct_url.json for `pip install path/to/the.whl`), so its platform tag "
            "cannot be compared with auditwheel's"
        )
    if importlib.util.find_spec("auditwheel") is None:
        raise NotApplicable("auditwheel is not installed in this environment (pip install auditwheel)")
    audit = audit_wheel(wheel)
    provided: set[str] = set()
    roots = environment_roots()
    try:
        spec = importlib.util.find_spec(ctx.descriptor.python_package)
    except (ImportError, ValueError):
        spec = None
    vendor_dir = Path(os.path.realpath(spec.origin)).parent if spec and spec.origin else Path("/nonexistent")
    for lib in _runtime_libraries(ctx):
        try:
            for r in resolve_needed(read_library(lib)):
                if r.path and inside(r.path, roots) and not inside(r.path, [vendor_dir]):
                    provided.add(r.name)
        except ValueError:
            continue  # PKG-5 and PKG-6 report an unreadable library
    problems, summary = wheel_tag_problems(wheel, audit, provided)
    ensure(not problems, "; ".join(problems))
    return f"{wheel.name}: {summary}"
