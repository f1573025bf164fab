"""Is a prebuilt backend library binary compatible with other ExecuTorch releases?

For a library ``LIB.so`` built against release B and each target release R:

1. Libraries: every ``DT_NEEDED`` entry of LIB that is one of B's shipped libraries (by SONAME
   or file name) must be shipped by R too.
2. Symbols: every ExecuTorch symbol LIB imports (undefined dynamic symbols in the ExecuTorch
   namespaces, demangled) must be exported by R's runtime library (the one carrying the backend
   registry). Weak imports are reported but do not decide.
3. Types: the backend-facing types LIB uses must have the same layout (and vtable, enum values)
   in R as in B. "Uses" is read from the binary: types named in the signatures of the symbols it
   imports or exports, classes named by its RTTI strings (a class deriving from
   ``BackendInterface`` carries that base's type name), then closed over the types those types
   mention (members, vtable signatures and return types). A type whose layout R (or B) cannot
   show, because the wheel ships no header for it, cannot be verified and so fails the check.

Verdict per release: "binary compatible" when all three hold, otherwise "must rebuild", with why.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from abi_checks.diff import BREAKING, compare_type, load_baseline
from abi_checks.elf import demangle_many, is_executorch_symbol, read_dynamic, rtti_type_names

COMPATIBLE, REBUILD = "binary compatible", "must rebuild"


class NoExecutorchImports(ValueError):
    """The library imports nothing from ExecuTorch."""


class UnknownBuildRelease(ValueError):
    """The release the library was built against is unknown."""


@dataclasses.dataclass
class Verdict:
    release: str
    verdict: str
    reasons: list[str]
    notes: list[str]
    details: list[str] = dataclasses.field(default_factory=list)  # full layout differences

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

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["verdicts"] = [v.as_dict() for v in self.verdicts]
        return d

    @property
    def exit_code(self) -> int:
        return 0 if all(v.verdict == COMPATIBLE for v in self.verdicts) else 1


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


def check_library(lib: str | Path, against: list[str], built_against: str | None = None) -> Report:
    path = Path(lib)
    info = read_dynamic(path)
    imports = sorted({s.name for s in info.imported() if is_executorch_symbol(s.name)})
    weak = {s.name for s in info.imported() if s.binding == "WEAK"}
    if not imports:
        raise NoExecutorchImports(
            f"{path.name} imports no ExecuTorch symbols: it is not an ExecuTorch backend library, or it "
            f"links the runtime statically (then it registers into its own private copy of the registry, "
            f"which the executorch wheel's runtime never sees). Nothing to check."
        )
    release, source = built_against_from(path, built_against)
    base = load_baseline(release)
    targets = [load_baseline(r) for r in against]

    exported_et = sorted({s.name for s in info.exported() if is_executorch_symbol(s.name)})
    dem = demangle_many(imports + exported_et)
    rtti = rtti_type_names(path)
    texts = {f"imported symbol {dem[m]}": dem[m] for m in imports}
    texts.update({f"exported symbol {dem[m]}": dem[m] for m in exported_et})
    texts.update({f"RTTI names {r}": r for r in rtti})
    uses = used_types(base, texts)

    shipped_b = _shipped_names(base)
    et_needed = [n for n in info.needed if n in shipped_b]
    verdicts = []
    for tgt in targets:
        reasons, notes, details = [], [], []
        shipped_r = _shipped_names(tgt)
        missing_libs = [n for n in et_needed if n not in shipped_r]
        if missing_libs:
            reasons.append(
                f"needs {', '.join(missing_libs)}, which executorch {tgt['release']} does not ship"
            )
        exported = tgt["symbols"]["exported"]
        for m in imports:
            if m not in exported:
                if m in weak:
                    notes.append(f"weak import {dem[m]} not exported (allowed: weak)")
                else:
                    reasons.append(
                        f"missing symbol {dem[m]} (not exported by {tgt['runtime_library']['path']})"
                    )
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
                    details.append(
                        f"{what} of {key} changed ({base['release']} -> {tgt['release']}: {c.detail})"
                    )
        for rel, keys in unverifiable.items():
            reasons.append(
                f"layouts of {', '.join(keys)} cannot be verified: executorch {rel} ships no header for them"
            )
        if tgt["release"] == base["release"]:
            notes.append("the release it was built against")
        verdicts.append(Verdict(tgt["release"], REBUILD if reasons else COMPATIBLE, reasons, notes, details))
    return Report(
        library=str(path),
        built_against=base["release"],
        built_against_source=source,
        imports={m: dem[m] for m in imports if m not in weak},
        weak_imports={m: dem[m] for m in imports if m in weak},
        used_types=uses,
        needed=info.needed,
        verdicts=verdicts,
    )


def _shipped_names(base: dict) -> set[str]:
    out = set()
    for lib in base.get("shipped_libraries", []):
        out.add(Path(lib["path"]).name)
        if lib.get("soname"):
            out.add(lib["soname"])
    return out


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
    lines.append("")
    lines += format_table(r).splitlines()
    return "\n".join(lines)


def format_table(r: Report) -> str:
    lines = ["| executorch | verdict | why |", "|---|---|---|"]
    for v in r.verdicts:
        why = (
            "; ".join(v.reasons)
            if v.reasons
            else (
                "all imports resolve; used layouts unchanged"
                + (f" ({'; '.join(v.notes)})" if v.notes else "")
            )
        )
        lines.append(f"| {v.release} | {v.verdict} | {why.replace('|', '/')} |")
    return "\n".join(lines)


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
            'Verdicts (a release is "binary compatible" when every import resolves in its runtime library, every '
            "executorch library the binary NEEDs is shipped, and every used type has the same layout, vtable and "
            'enum values as in the release it was built against; "removed"/"added" read from the release it was '
            "built against to the release in the row; full differences: `--json`, field `details`):"
        ),
        "",
    ]
    lines += format_table(r).splitlines()
    return "\n".join(lines) + "\n"
