"""Changes between two C++ ABI baselines, classified by what they do to a prebuilt backend.

Categories and severity (the exit code of ``executorch-conformance abi diff``):

============================  ========  ==================================================
category                      severity  meaning
============================  ========  ==================================================
symbol added                  addition  NEW exports a symbol OLD did not
enum value added              addition  an enumerator exists only in NEW
layout not comparable         info      one side ships no header for the type
symbol removed                breaking  a symbol OLD exported is gone: a binary importing it
                                        fails to load
runtime library changed       breaking  the registry moved to another library (SONAME): a
                                        binary that NEEDs the old one does not find it
layout changed                breaking  size, alignment, bases or members (name, type,
                                        offset) of a type differ
vtable changed                breaking  virtual functions moved, appeared, vanished or
                                        changed signature
enum value changed            breaking  an enumerator has another value, or was removed
============================  ========  ==================================================

Exit code: 0 when there are no changes or only additions/info, 1 when anything is breaking,
2 on errors (unknown release, unreadable file).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from abi_checks import BASELINE_DIR

ADDITION, INFO, BREAKING = "addition", "info", "breaking"
SEVERITY = {
    "symbol added": ADDITION,
    "enum value added": ADDITION,
    "layout not comparable": INFO,
    "symbol removed": BREAKING,
    "runtime library changed": BREAKING,
    "layout changed": BREAKING,
    "vtable changed": BREAKING,
    "enum value changed": BREAKING,
}
ORDER = list(SEVERITY)


class UnknownRelease(ValueError):
    """No baseline for that release."""


def available_releases() -> list[str]:
    from packaging.version import Version

    return sorted((p.stem for p in BASELINE_DIR.glob("*.json")), key=Version)


class NotABaseline(ValueError):
    """A file given as a baseline is missing, unreadable or not a baseline."""


#: Fields every baseline has, with their JSON types (abi_checks/make_baseline.py writes them).
BASELINE_FIELDS = {"release": str, "runtime_library": dict, "symbols": dict, "layouts": dict}


def _looks_like_path(name_or_path: str | Path) -> bool:
    text = str(name_or_path)
    return isinstance(name_or_path, Path) or text.endswith(".json") or "/" in text or "\\" in text


def _validated(data: object, where: str) -> dict:
    if not isinstance(data, dict):
        raise NotABaseline(f"{where} holds a JSON {type(data).__name__}, not an ABI baseline object")
    missing = [k for k, t in BASELINE_FIELDS.items() if not isinstance(data.get(k), t)]
    if missing:
        hint = (
            " (it is a conformance report; compare releases or baselines)"
            if data.get("schema") == "executorch-conformance-report"
            else ""
        )
        raise NotABaseline(
            f"{where} is not an ABI baseline{hint}: it lacks {', '.join(missing)} (baselines are made by "
            "abi_checks/make_baseline.py; see executorch-conformance abi list)"
        )
    return data


def load_baseline(name_or_path: str | Path) -> dict:
    """A baseline by release name (``1.5.1``) or by path to a JSON file.

    Raises UnknownRelease for a release without a baseline and NotABaseline for a
    file that is missing, unreadable, larger than 256 MiB or not a baseline.
    """
    if _looks_like_path(name_or_path):
        p = Path(name_or_path)
        from conformance.certification.strict_json import Unreadable, read_json

        try:
            data = read_json(p, max_bytes=256 * 1024 * 1024)
        except Unreadable as exc:
            if not p.exists():
                raise NotABaseline(
                    f"{p}: no such file (give a release, e.g. 1.5.0, or a baseline .json)"
                ) from None
            raise NotABaseline(f"{p} {exc}") from None
        return _validated(data, str(p))
    p = BASELINE_DIR / f"{name_or_path}.json"
    if not p.exists():
        raise UnknownRelease(
            f"no ABI baseline for executorch {name_or_path!s}; known releases: "
            f"{', '.join(available_releases())} (make one with: python -m abi_checks.tools.make_baseline "
            f"{name_or_path})"
        )
    return json.loads(p.read_text())


@dataclasses.dataclass(frozen=True)
class Change:
    category: str
    subject: str
    detail: str = ""

    @property
    def severity(self) -> str:
        return SEVERITY[self.category]

    def as_dict(self) -> dict:
        return {
            "category": self.category,
            "severity": self.severity,
            "subject": self.subject,
            "detail": self.detail,
        }


# ---------------------------------------------------------------- type records


def compare_type(name: str, old: dict, new: dict) -> list[Change]:
    """Differences between two layout records of the same type."""
    if old.get("kind") == "enum" or new.get("kind") == "enum":
        return _compare_enum(name, old, new)
    out: list[Change] = []
    lay: list[str] = []
    if old.get("qualified_name") != new.get("qualified_name"):
        lay.append(f"qualified name {old.get('qualified_name')} -> {new.get('qualified_name')}")
    if old.get("kind") != new.get("kind"):
        lay.append(f"kind {old.get('kind')} -> {new.get('kind')}")
    for key in ("size", "alignment"):
        if old.get(key) != new.get(key):
            lay.append(f"{key} {old.get(key)} -> {new.get(key)} bytes")
    ob = [(b["type"], b["offset"], b.get("virtual", False)) for b in old.get("bases", [])]
    nb = [(b["type"], b["offset"], b.get("virtual", False)) for b in new.get("bases", [])]
    if ob != nb:
        lay.append(f"bases {ob} -> {nb}")
    lay += _compare_members(old.get("members", []), new.get("members", []))
    for nested in sorted(set(old.get("nested", {})) | set(new.get("nested", {}))):
        o, n = old.get("nested", {}).get(nested), new.get("nested", {}).get(nested)
        if o is None or n is None:
            lay.append(f"nested type {nested} {'added' if o is None else 'removed'}")
            continue
        for c in compare_type(f"{name}::{nested}", o, n):
            lay.append(f"{c.subject}: {c.detail}" if c.subject != name else c.detail)
    if lay:
        out.append(Change("layout changed", name, "; ".join(lay)))
    vt = _compare_vtables(old.get("vtable", []), new.get("vtable", []))
    if vt:
        out.append(Change("vtable changed", name, "; ".join(vt)))
    return out


def _compare_members(old: list[dict], new: list[dict]) -> list[str]:
    om, nm = {m["name"]: m for m in old}, {m["name"]: m for m in new}
    out = []
    for m in new:
        if m["name"] not in om:
            out.append(
                f"member {m['name']} ({m.get('canonical_type', m['type'])}) added at offset {m['offset']}"
            )
    for m in old:
        if m["name"] not in nm:
            out.append(
                f"member {m['name']} ({m.get('canonical_type', m['type'])}) at offset {m['offset']} removed"
            )
            continue
        n = nm[m["name"]]
        if m["offset"] != n["offset"]:
            out.append(f"member {m['name']} moved from offset {m['offset']} to {n['offset']}")
        mt, nt = m.get("canonical_type", m["type"]), n.get("canonical_type", n["type"])
        if mt != nt:
            out.append(f"member {m['name']} type {mt} -> {nt}")
        elif m.get("size") != n.get("size"):
            out.append(f"member {m['name']} size {m.get('size')} -> {n.get('size')} bytes")
    if not out and [m["name"] for m in old] != [m["name"] for m in new]:
        out.append("member order changed")
    return out


def _vt_key(e: dict) -> tuple:
    return e["slot"], e["name"], _unqualified_sig(e.get("signature", "")), e.get("returns")


def _unqualified_sig(sig: str) -> str:
    # "ns::Class::f(args) const" -> "f(args) const": the class's own qualification is compared
    # separately (qualified name); argument types stay fully qualified.
    head, paren, rest = sig.partition("(")
    return head.rsplit("::", 1)[-1] + paren + rest


def _compare_vtables(old: list[dict], new: list[dict]) -> list[str]:
    if [_vt_key(e) for e in old] == [_vt_key(e) for e in new]:
        return []
    out = []
    on, nn = [e["name"] for e in old], [e["name"] for e in new]
    added = [n for n in nn if n not in on]
    removed = [n for n in on if n not in nn]
    if added:
        out.append(f"virtual {', '.join(added)} added")
    if removed:
        out.append(f"virtual {', '.join(removed)} removed")
    if [n for n in on if n in nn] != [n for n in nn if n in on]:
        out.append("virtuals reordered")
    ob, nb = {e["name"]: e for e in old}, {e["name"]: e for e in new}
    for name in on:
        if name in nb:
            o, n = ob[name], nb[name]
            if o["slot"] != n["slot"]:
                out.append(f"{name} slot {o['slot']} -> {n['slot']}")
            if _unqualified_sig(o.get("signature", "")) != _unqualified_sig(n.get("signature", "")):
                out.append(f"{name} signature {o.get('signature')} -> {n.get('signature')}")
            if o.get("returns") != n.get("returns"):
                out.append(f"{name} returns {o.get('returns')} -> {n.get('returns')}")
    out.append(f"order {on} -> {nn}")
    return out


def _compare_enum(name: str, old: dict, new: dict) -> list[Change]:
    out = []
    ov, nv = old.get("values", {}), new.get("values", {})
    changed = [f"{k} {ov[k]} -> {nv[k]}" for k in ov if k in nv and ov[k] != nv[k]]
    removed = [f"{k} (= {ov[k]}) removed" for k in ov if k not in nv]
    added = [f"{k} = {nv[k]}" for k in nv if k not in ov]
    if old.get("size") != new.get("size"):
        out.append(Change("layout changed", name, f"size {old.get('size')} -> {new.get('size')} bytes"))
    if changed or removed:
        out.append(Change("enum value changed", name, "; ".join(changed + removed)))
    if added:
        out.append(Change("enum value added", name, "; ".join(added)))
    return out


# ---------------------------------------------------------------- baselines


def diff_layouts(old: dict, new: dict) -> list[Change]:
    ol, nl = old["layouts"], new["layouts"]
    out: list[Change] = []
    keys = list(
        dict.fromkeys(
            [
                *ol.get("types", {}),
                *nl.get("types", {}),
                *ol.get("unavailable", {}),
                *nl.get("unavailable", {}),
            ]
        )
    )
    for key in keys:
        o, n = ol.get("types", {}).get(key), nl.get("types", {}).get(key)
        if o is None or n is None:
            why = []
            if o is None:
                why.append(f"{old['release']}: {ol.get('unavailable', {}).get(key, 'not recorded')}")
            if n is None:
                why.append(f"{new['release']}: {nl.get('unavailable', {}).get(key, 'not recorded')}")
            out.append(Change("layout not comparable", key, "; ".join(why)))
            continue
        out += compare_type(key, o, n)
    od, nd = ol.get("dependent_types", {}), nl.get("dependent_types", {})
    for q in sorted(set(od) & set(nd)):
        out += compare_type(q, od[q], nd[q])
    return out


def diff_baselines(old: dict, new: dict) -> list[Change]:
    out: list[Change] = []
    orl, nrl = old["runtime_library"]["path"], new["runtime_library"]["path"]
    osn, nsn = old["symbols"].get("soname"), new["symbols"].get("soname")
    if (osn or Path(orl).name) != (nsn or Path(nrl).name):
        out.append(
            Change(
                "runtime library changed", "register_backend", f"{orl} (SONAME {osn}) -> {nrl} (SONAME {nsn})"
            )
        )
    oe, ne = old["symbols"]["exported"], new["symbols"]["exported"]
    for m in sorted(set(oe) - set(ne), key=lambda k: oe[k]):
        out.append(Change("symbol removed", oe[m], m))
    for m in sorted(set(ne) - set(oe), key=lambda k: ne[k]):
        out.append(Change("symbol added", ne[m], m))
    out += diff_layouts(old, new)
    return out


def exit_code(changes: list[Change]) -> int:
    return 1 if any(c.severity == BREAKING for c in changes) else 0


def format_changes(old: dict, new: dict, changes: list[Change], limit: int | None = 20) -> str:
    lines = [
        f"ABI diff executorch {old['release']} -> {new['release']}",
        f"  runtime library: {old['runtime_library']['path']} -> {new['runtime_library']['path']}",
        (
            f"  executorch symbols exported: {old['symbols']['executorch_exported']} -> "
            f"{new['symbols']['executorch_exported']}"
        ),
        f"  layouts: {old['layouts']['status']} -> {new['layouts']['status']}",
    ]
    by_cat: dict[str, list[Change]] = {}
    for c in changes:
        by_cat.setdefault(c.category, []).append(c)
    if not changes:
        lines.append("no changes")
    for cat in ORDER:
        items = by_cat.get(cat, [])
        if not items:
            continue
        lines.append(f"{cat} [{SEVERITY[cat]}]: {len(items)}")
        # Destructor and constructor variants (D0/D1/D2, C1/C2) demangle alike: list them once.
        counts: dict[tuple[str, str], int] = {}
        for c in items:
            key = (c.subject, "" if cat.startswith("symbol") else c.detail)
            counts[key] = counts.get(key, 0) + 1
        keys = list(counts)
        shown = keys if limit is None else keys[:limit]
        for subject, detail in shown:
            n = counts[(subject, detail)]
            lines.append(f"  - {subject}{': ' + detail if detail else ''}{f' (x{n})' if n > 1 else ''}")
        if len(shown) < len(keys):
            lines.append(f"  ... and {len(keys) - len(shown)} more (--all to list them)")
    verdict = (
        "binary-breaking changes" if exit_code(changes) else ("additions only" if changes else "no changes")
    )
    lines.append(f"verdict: {verdict}")
    return "\n".join(lines)
