"""Is a prebuilt backend library binary compatible with other ExecuTorch releases?

For a library ``LIB.so`` built against release B and each target release R:

1. Libraries: the loader must find every ExecuTorch library LIB (or a library it loads) NEEDs:
   already loaded by ``import executorch.runtime``, or through the RUNPATH/RPATH in its package
   (abi_checks/loader.py follows the loader's rules).
2. Symbols: every ExecuTorch symbol LIB imports (undefined dynamic symbols in the ExecuTorch
   namespaces, demangled) must bind to an object in its lookup scope: its own sibling
   libraries, R's libraries it NEEDs. A missing one names the library that exported it with B.
   Weak imports are reported but do not decide.
3. Types: the backend-facing types LIB uses must have the same layout (and vtable, enum values)
   in R as in B. "Uses" is read from the binary: types named in the signatures of the symbols it
   imports or exports, classes named by its RTTI strings (a class deriving from
   ``BackendInterface`` carries that base's type name), then closed over the types those types
   mention (members, vtable signatures and return types). A type whose layout R (or B) cannot
   show, because the wheel ships no header for it, cannot be verified and so fails the check.
4. Registry: a library that defines the backend registry itself (abi_checks/runtime_copy.py)
   gets a verdict of its own, whatever 1-3 say: "carries its own runtime" or "carries its own
   registry"; R's own registry library gets "is this release's runtime".

Verdict per release: "binary compatible" when 1-3 hold, otherwise "must rebuild", with why.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from pathlib import Path

from abi_checks.diff import BREAKING, compare_type, load_baseline
from abi_checks.elf import (
    DynamicInfo,
    demangle_many,
    is_executorch_symbol,
    read_dynamic,
    rtti_type_names,
    static_definitions,
)
from abi_checks.loader import PACKAGE, RELEASE, SUBJECT, Edge, LoadedObject, Package, Scope, load
from abi_checks.release_libraries import ReleaseLibraries, file_sha256, release_libraries
from abi_checks.runtime_copy import OWN_REGISTRY, OWN_RUNTIME, RuntimeCopy, classify, fix, meaning

COMPATIBLE, REBUILD = "binary compatible", "must rebuild"
RELEASE_RUNTIME = "is this release's runtime"
PRIVATE = (OWN_RUNTIME, OWN_REGISTRY)
FINE = (COMPATIBLE, RELEASE_RUNTIME)


class NoExecutorchImports(ValueError):
    """The library neither imports ExecuTorch symbols nor carries a registry: not a backend library."""


class UnknownBuildRelease(ValueError):
    """The release the library was built against is unknown."""


@dataclasses.dataclass
class Verdict:
    release: str
    verdict: str
    reasons: list[str]
    notes: list[str]
    details: list[str] = dataclasses.field(default_factory=list)  # full layout differences
    meaning: str = ""  # for a runtime or registry of its own: what the user gets
    fix: str = ""  # ... and what the vendor does
    providers: dict[str, int] = dataclasses.field(default_factory=dict)  # object -> imports bound there

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Report:
    library: str
    built_against: str
    built_against_source: str
    imports: dict[str, str]  # mangled -> demangled (strong imports)
    weak_imports: dict[str, str]
    used_types: dict[str, str]  # type key -> why
    needed: list[str]
    verdicts: list[Verdict]
    runtime_copy: dict | None = None  # abi_checks.runtime_copy.RuntimeCopy, when it has one
    sha256: str = ""

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["verdicts"] = [v.as_dict() for v in self.verdicts]
        return d

    @property
    def exit_code(self) -> int:
        """0 fine with every release, 1 must rebuild for some, 4 carries its own runtime or registry."""
        if any(v.verdict in PRIVATE for v in self.verdicts):
            return 4
        return 0 if all(v.verdict in FINE for v in self.verdicts) else 1


def release_of_version(version: str) -> str:
    """``1.5.1+cpu`` -> ``1.5.1``."""
    from packaging.version import Version

    return Version(version).base_version


def built_against_from(lib: Path, given: str | None) -> tuple[str, str]:
    if given:
        return given, "--built-against"
    info = lib.parent / "build_info.json"
    if info.is_file():
        try:
            version = json.loads(info.read_text())["executorch_version"]
        except (ValueError, KeyError) as exc:
            raise UnknownBuildRelease(f"{info} has no readable executorch_version ({exc})") from None
        return release_of_version(version), f"{info} (executorch_version {version})"
    raise UnknownBuildRelease(
        f"cannot tell which executorch release {lib.name} was built against: no build_info.json next to "
        f"it; pass --built-against RELEASE"
    )


def _type_pattern(qualified: str) -> re.Pattern:
    return re.compile(re.escape(qualified) + r"(?![A-Za-z0-9_])")


def _mentions(record: dict) -> str:
    """All type text a layout record mentions (members, bases, vtable, nested)."""
    parts = [m["type"] for m in record.get("members", [])]
    parts += [b["type"] for b in record.get("bases", [])]
    for e in record.get("vtable", []):
        parts += [e.get("signature", ""), e.get("returns") or ""]
    for n in record.get("nested", {}).values():
        parts.append(_mentions(n))
    return "\n".join(parts)


def used_types(base: dict, texts: dict[str, str]) -> dict[str, str]:
    """Tracked type keys the library uses, with why. ``texts``: origin -> demangled text."""
    types = base["layouts"].get("types", {})
    names = {k: r["qualified_name"] for k, r in types.items() if r.get("qualified_name")}
    # Types whose layout this baseline cannot show are matched by their unqualified name.
    for key in base["layouts"].get("unavailable", {}):
        names.setdefault(key, key)
    found: dict[str, str] = {}
    for key, q in names.items():
        pat = (
            _type_pattern(q)
            if "::" in q
            else re.compile(r"(?<![A-Za-z0-9_])" + re.escape(q) + r"(?![A-Za-z0-9_])")
        )
        for origin, text in texts.items():
            if pat.search(text):
                found[key] = origin
                break
    todo = list(found)
    while todo:
        key = todo.pop()
        rec = types.get(key)
        if rec is None:
            continue
        text = _mentions(rec)
        for other, q in names.items():
            if other not in found and "::" in q and _type_pattern(q).search(text):
                found[other] = f"used by {key}"
                todo.append(other)
    return found


@dataclasses.dataclass
class _Subject:
    """What the binary itself says, read once."""

    path: Path
    info: DynamicInfo
    imports: list[str]  # mangled ExecuTorch imports (strong and weak)
    weak: set[str]
    dem: dict[str, str]
    copy: RuntimeCopy | None
    sha256: str


def _read_subject(path: Path) -> _Subject:
    info = read_dynamic(path)
    imports = sorted({s.name for s in info.imported() if is_executorch_symbol(s.name)})
    weak = {s.name for s in info.imported() if s.binding == "WEAK"}
    exported = sorted({s.name for s in info.exported() if is_executorch_symbol(s.name)})
    # Defined but not exported: the .symtab of an unstripped file, and hidden .dynsym entries.
    defined = set(static_definitions(path)) | {s.name for s in info.symbols if s.defined}
    hidden = sorted(n for n in defined - set(exported) if is_executorch_symbol(n))
    dem = demangle_many(sorted(set(imports) | set(exported) | set(hidden)))
    copy = classify(
        [dem[n] for n in exported],
        [dem[n] for n in hidden],
        [dem[n] for n in imports],
        rtti_type_names(path),
    )
    if not imports and copy is None:
        what = (
            f"defines {len(exported)} ExecuTorch symbols but neither imports nor defines the backend registry"
            if exported
            else "imports and defines no ExecuTorch symbols"
        )
        raise NoExecutorchImports(
            f"{path.name} imports no ExecuTorch symbols: it {what.removeprefix('imports and ')}, and implements no "
            f"BackendInterface, so it is not an ExecuTorch backend library (its defined symbols say so: no "
            f"register_backend, get_backend_class, Program or Method in it). Nothing to check."
        )
    return _Subject(path, info, imports, weak, dem, copy, file_sha256(path))


@dataclasses.dataclass
class _Loaded:
    scope: Scope  # of the object dlopen() opens: the subject, or the library that loads it
    package: Package
    libs: ReleaseLibraries
    subject: LoadedObject
    edges: list[Edge]  # NEEDED entries of the subject and of what it loads


def _scope(subject: _Subject, base: dict, root: Path | None, loaded_by: Path | None) -> _Loaded:
    """The subject's scope with ``base``'s release. With ``loaded_by``, the subject is a
    dependency of that library: glibc binds every object of a dlopen()ed tree in the tree's
    one scope (the opened object and its dependencies breadth-first)."""
    libs = release_libraries(base)
    opened = loaded_by or subject.path
    package = Package.on_disk(root, opened, libs) if root else Package.around(opened, libs)
    scope = load(package.subject(), package, package.preloaded())
    target = subject.path.resolve()
    me = next((o for o in scope.order if o.real_path == target), None)
    if me is None:
        raise ValueError(f"{opened.name} does not load {subject.path.name}")
    reach, todo = {id(me)}, [me]
    while todo:
        obj = todo.pop()
        for e in scope.edges:
            if e.requester is obj and e.found is not None and id(e.found) not in reach:
                reach.add(id(e.found))
                todo.append(e.found)
    edges = [e for e in scope.edges if id(e.requester) in reach]
    return _Loaded(scope, package, libs, me, edges)


@functools.lru_cache(maxsize=1)
def _every_release_name() -> frozenset[str]:
    from abi_checks.diff import available_releases

    names: set[str] = set()
    for r in available_releases():
        names |= release_libraries(load_baseline(r)).names()
    return frozenset(names)


def _expected_names(*bases: dict) -> set[str]:
    """File names and SONAMEs of ExecuTorch's own libraries, in the releases given and all with a record."""
    names = set(_every_release_name())
    for b in bases:
        names |= release_libraries(b).names()
    return names


def check_library(
    lib: str | Path,
    against: list[str],
    built_against: str | None = None,
    root: Path | None = None,
    loaded_by: Path | None = None,
) -> Report:
    """``abi check`` of ``lib`` for each release in ``against``. ``root``: the unpacked wheel the
    library is in (check-wheel); by default the package around the library (abi_checks/loader.py).
    ``loaded_by``: a library of the package that NEEDs ``lib`` and is what gets opened."""
    path = Path(lib)
    subject = _read_subject(path)
    imports, weak, dem = subject.imports, subject.weak, subject.dem
    release, source = built_against_from(path, built_against)
    base = load_baseline(release)
    targets = [load_baseline(r) for r in against]

    info = subject.info
    exported_et = sorted({s.name for s in info.exported() if is_executorch_symbol(s.name)})
    dem = {**dem, **demangle_many([n for n in exported_et if n not in dem])}
    rtti = rtti_type_names(path)
    texts = {f"imported symbol {dem[m]}": dem[m] for m in imports}
    texts.update({f"exported symbol {dem[m]}": dem[m] for m in exported_et})
    texts.update({f"RTTI names {r}": r for r in rtti})
    uses = used_types(base, texts)

    symbols = {s.name: s for s in info.imported() if s.name in set(imports)}
    loaded_b = _scope(subject, base, root, loaded_by)
    expected = {m: loaded_b.scope.provider(symbols[m]) for m in imports}
    et_names = _expected_names(base, *targets)
    verdicts = []
    for tgt in targets:
        verdicts.append(
            _judge(
                subject, base, tgt, _scope(subject, tgt, root, loaded_by), uses, symbols, expected, et_names
            )
        )
    return Report(
        library=str(path),
        built_against=base["release"],
        built_against_source=source,
        imports={m: dem[m] for m in imports if m not in weak},
        weak_imports={m: dem[m] for m in imports if m in weak},
        used_types=uses,
        needed=info.needed,
        verdicts=verdicts,
        runtime_copy=dataclasses.asdict(subject.copy) if subject.copy else None,
        sha256=subject.sha256,
    )


def _judge(subject, base, tgt, loaded: _Loaded, uses, symbols, expected, et_names) -> Verdict:
    imports, weak, dem = subject.imports, subject.weak, subject.dem
    reasons: list[str] = []
    notes: list[str] = []
    details: list[str] = []
    scope, package, libs, me = loaded.scope, loaded.package, loaded.libs, loaded.subject
    rel = tgt["release"]
    if me is not scope.order[0]:
        notes.append(f"judged as loaded by {scope.order[0].path}, which NEEDs it")

    # 1. NEEDED entries: an ExecuTorch library the loader does not find fails the load.
    missing_libs: dict[str, list[str]] = {}
    elsewhere: dict[str, set[str]] = {}  # not ExecuTorch, not found here: name -> directories searched
    for edge in (e for e in loaded.edges if e.found is None):
        if edge.name in et_names:
            missing_libs.setdefault(edge.requester.path, []).append(edge.name)
        elif edge.requester.where in (SUBJECT, PACKAGE):
            elsewhere.setdefault(edge.name, set()).update(edge.searched)
    if elsewhere:
        searched = sorted({d for dirs in elsewhere.values() for d in dirs if not d.startswith("/")})
        notes.append(
            f"not ExecuTorch libraries, not found in {package.label} and not judged (another distribution or "
            f"the system provides them): {', '.join(sorted(elsewhere))}"
            + (f" (searched there: {', '.join(searched)})" if searched else "")
        )
    for requester, names in missing_libs.items():
        from_them = [
            m
            for m in imports
            if expected.get(m) is not None and expected[m].file_name in names and m not in weak
        ]
        via = "" if requester == me.path else f" (NEEDED by {requester}, which it loads)"
        count = (
            f" ({len(from_them)} of its imports come from {'it' if len(names) == 1 else 'them'})"
            if from_them
            else ""
        )
        reasons.append(f"needs {', '.join(names)}{via}, which executorch {rel} does not ship{count}")
    unloaded = {n for names in missing_libs.values() for n in names}

    # 2. Symbols: each import binds to the first object in scope that exports it.
    providers: dict[str, int] = {}
    for m in imports:
        found = scope.provider(symbols[m])
        if found is not None:
            key = f"{found.path} ({'executorch ' + rel if found.where == RELEASE else 'package'})"
            providers[key] = providers.get(key, 0) + 1
            continue
        if m in weak:
            notes.append(f"weak import {dem[m]} binds to nothing (allowed: weak, it is 0)")
            continue
        exp = expected.get(m)
        if exp is not None and exp.file_name in unloaded:
            continue  # the missing library is the reason already
        if exp is None:
            loaded_names = ", ".join(o.path for o in scope.order if o is not me and o.exports is not None)
            not_found = sorted(elsewhere)
            loaded_text = (loaded_names or "nothing") + (
                f"; not found: {', '.join(not_found)}" if not_found else ""
            )
            with_b = (
                "" if rel == base["release"] else f", nor with executorch {base['release']} (built against)"
            )
            reasons.append(
                f"missing symbol {dem[m]}: no library it loads exports it{with_b} (loaded: {loaded_text})"
            )
        elif exp.where == RELEASE:
            reasons.append(f"missing symbol {dem[m]} (not exported by executorch {rel}'s {exp.path})")
        else:
            reasons.append(
                f"missing symbol {dem[m]} (expected from {exp.path}, which is not loaded with executorch {rel})"
            )

    # 3. Layouts of the types it uses.
    unverifiable: dict[str, list[str]] = {}
    for key in uses:
        o = base["layouts"].get("types", {}).get(key)
        n = tgt["layouts"].get("types", {}).get(key)
        if o is None or n is None:
            side = base if o is None else tgt
            unverifiable.setdefault(side["release"], []).append(key)
            continue
        for c in compare_type(key, o, n):
            if c.severity == BREAKING:
                what = c.category.replace(" changed", "")
                first, _, rest = c.detail.partition("; ")
                reasons.append(f"{what} of {key} changed ({first}{'; ...' if rest else ''})")
                details.append(f"{what} of {key} changed ({base['release']} -> {rel}: {c.detail})")
    for r, keys in unverifiable.items():
        reasons.append(
            f"layouts of {', '.join(keys)} cannot be verified: executorch {r} ships no header for them"
        )

    if rel == base["release"]:
        notes.append("the release it was built against")
    subject_obj = me
    for obj in package.preloaded():
        if subject_obj.soname and obj.soname == subject_obj.soname and libs.by_sha256(subject.sha256) is None:
            notes.append(
                f"executorch {rel} loads {obj.path} with the same SONAME {obj.soname} at import: this file is loaded "
                f"as a second copy next to it"
            )

    # 4. A runtime or registry of its own decides the verdict whatever else holds.
    own = libs.by_sha256(subject.sha256)
    if own is not None:
        notes.append(f"it is executorch {rel}'s own {own.path}")
    if own is not None and own.path == libs.registry_library:
        return Verdict(
            rel,
            RELEASE_RUNTIME,
            [],
            notes + [f"the registry executorch.runtime {rel} uses"],
            details,
            providers=providers,
        )
    if subject.copy is not None:
        registry = libs.registry_library
        return Verdict(
            rel,
            subject.copy.kind,
            [subject.copy.evidence, *reasons],
            notes,
            details,
            meaning=meaning(subject.copy, subject.path.name, rel, registry),
            fix=fix(subject.copy, rel, registry),
            providers=providers,
        )
    return Verdict(rel, REBUILD if reasons else COMPATIBLE, reasons, notes, details, providers=providers)


def format_report(r: Report) -> str:
    lines = [
        f"library: {r.library}",
        f"built against: executorch {r.built_against} (from {r.built_against_source})",
        f"executorch imports ({len(r.imports)}):",
    ]
    lines += [f"  {d}" for d in sorted(r.imports.values())]
    if r.weak_imports:
        lines.append(f"weak executorch imports ({len(r.weak_imports)}):")
        lines += [f"  {d}" for d in sorted(r.weak_imports.values())]
    lines.append(
        "backend-facing types it uses: "
        + (", ".join(f"{k} ({why})" for k, why in r.used_types.items()) or "none found")
    )
    if r.runtime_copy:
        lines.append(f"registry: {r.runtime_copy['kind']}: {r.runtime_copy['evidence']}")
    lines.append("")
    lines += format_table(r).splitlines()
    lines += format_consequences(r, "")
    return "\n".join(lines)


def format_consequences(r: Report, bullet: str) -> list[str]:
    """What a runtime or registry of its own means for each release, and what to do; grouped."""
    out: list[str] = []
    seen: dict[tuple[str, str], list[str]] = {}
    for v in r.verdicts:
        if v.meaning:
            seen.setdefault((v.meaning, v.fix), []).append(v.release)
    for (what, todo), releases in seen.items():
        out += ["", f"{bullet}With executorch {', '.join(releases)}: {what}.", f"{bullet}What to do: {todo}."]
    return out


def format_table(r: Report) -> str:
    from conformance.markdown_table import markdown_table

    rows = []
    for v in r.verdicts:
        why = (
            "; ".join(v.reasons)
            if v.reasons
            else (
                "all imports resolve; used layouts unchanged"
                + (f" ({'; '.join(v.notes)})" if v.notes else "")
            )
        )
        rows.append([v.release, v.verdict, why])
    return "\n".join(markdown_table(["executorch", "verdict", "why"], rows))


def format_markdown(r: Report, command: str) -> str:
    """A commit-ready page: date, exact command, imports, used types and the verdict table."""
    import datetime as _dt

    source = r.built_against_source.replace(str(Path.cwd()) + "/", "")

    lines = [
        f"# ABI check of `{Path(r.library).name}`",
        "",
        f"Generated {_dt.date.today().isoformat()} with:",
        "",
        "```",
        command,
        "```",
        "",
        f"Built against executorch **{r.built_against}** (from {source}).",
        "",
        f"ExecuTorch symbols it imports ({len(r.imports)}):",
        "",
    ]
    lines += [f"- `{d}`" for d in sorted(r.imports.values())]
    lines += [
        "",
        "Backend-facing types it uses (and why): "
        + ", ".join(f"`{k}` ({why})" for k, why in r.used_types.items()),
        "",
        (
            'Verdicts (a release is "binary compatible" when every import binds, the way the loader binds it, to a '
            "library it loads (its own siblings, the release's libraries it NEEDs), every executorch library it "
            "NEEDs is shipped, and every used type has the same layout, vtable and "
            'enum values as in the release it was built against; "removed"/"added" read from the release it was '
            "built against to the release in the row; full differences: `--json`, field `details`):"
        ),
        "",
    ]
    lines += format_table(r).splitlines()
    lines += format_consequences(r, "")
    return "\n".join(lines) + "\n"
