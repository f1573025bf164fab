#!/usr/bin/env python3
"""The Python AOT surface a backend author relies on, per ExecuTorch release, and what changed.

    python -m abi_checks.tools.python_api RELEASE [RELEASE ...] [--wheel-dir DIR]   # needs griffe
    python -m abi_checks.tools.python_api --table                                 # no griffe needed

The first form writes abi_checks/python_api/<release>.json: for each module below, the public
classes and functions *defined* there (not re-exports), with signatures, base classes, methods,
properties and annotated attributes, extracted statically by griffe from the unpacked wheel
(nothing is imported, so no torch is needed). ``executorch.exir`` is large: only its ``__all__``
and the signature of ``to_edge_transform_and_lower`` (followed through its re-exports) are kept.

The second form prints the markdown table of added / removed / changed members between
consecutive releases that abi_checks/README.md carries.

griffe is a tool-only dependency: install it in a separate venv (``pip install griffe``) and run
this script with that venv's Python; it imports nothing else from this project but
``make_baseline.find_or_download_wheel``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import itertools
import json
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from abi_checks import PYTHON_API_DIR

MODULES = [
    "executorch.exir.backend.partitioner",
    "executorch.exir.backend.backend_details",
    "executorch.exir.backend.compile_spec_schema",
    "executorch.exir",
    "executorch.runtime",
]
# From executorch.exir only these (it re-exports most of exir).
EXIR_FOCUS = ["to_edge_transform_and_lower"]
KEEP_DUNDER = {"__init__", "__call__", "__post_init__", "__init_subclass__"}


# ---------------------------------------------------------------- extraction (griffe)


def _module_file(root: Path, dotted: str) -> Path | None:
    base = root.joinpath(*dotted.split("."))
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _visit(root: Path, dotted: str):
    import griffe

    f = _module_file(root, dotted)
    if f is None:
        return None
    return griffe.visit(dotted.rsplit(".", 1)[-1], filepath=f, code=f.read_text())


def _signature(fn) -> str:
    parts, kw_marker, pos_only = [], False, False
    for p in fn.parameters:
        kind = p.kind.value if p.kind is not None else "positional or keyword"
        if kind == "positional-only":
            pos_only = True
        elif pos_only:
            parts.append("/")
            pos_only = False
        text = p.name
        if kind == "variadic positional":
            text, kw_marker = "*" + p.name, True
        elif kind == "variadic keyword":
            text = "**" + p.name
        elif kind == "keyword-only" and not kw_marker:
            parts.append("*")
            kw_marker = True
        if p.annotation is not None:
            text += f": {p.annotation}"
        if p.default is not None and kind not in ("variadic positional", "variadic keyword"):
            text += f" = {p.default}" if p.annotation is not None else f"={p.default}"
        parts.append(text)
    if pos_only:
        parts.append("/")
    out = f"({', '.join(parts)})"
    if fn.returns is not None:
        out += f" -> {fn.returns}"
    return out


def _describe(obj) -> dict[str, Any] | None:
    if obj.is_alias:
        return None
    d: dict[str, Any]
    if obj.is_function:
        d = {
            "kind": "property" if "property" in obj.labels else "function",
            "signature": _signature(obj),
            "parameters": [
                {
                    "name": p.name,
                    "kind": p.kind.value if p.kind is not None else None,
                    "annotation": None if p.annotation is None else str(p.annotation),
                    "default": None if p.default is None else str(p.default),
                }
                for p in obj.parameters
            ],
            "returns": None if obj.returns is None else str(obj.returns),
        }
        decos = sorted(str(x.value) for x in obj.decorators)
        if decos:
            d["decorators"] = decos
        return d
    if obj.is_class:
        d = {"kind": "class", "bases": [str(b) for b in obj.bases], "members": {}}
        decos = sorted(str(x.value) for x in obj.decorators)
        if decos:
            d["decorators"] = decos
        for name, m in obj.members.items():
            if name.startswith("_") and name not in KEEP_DUNDER:
                continue
            md = _describe(m)
            if md is not None:
                d["members"][name] = md
        return d
    if obj.is_attribute:
        d = {"kind": "attribute"}
        if obj.annotation is not None:
            d["annotation"] = str(obj.annotation)
        if obj.value is not None and len(str(obj.value)) < 120:
            d["value"] = str(obj.value)
        return d
    return None


def _follow(root: Path, dotted_path: str, depth: int = 0):
    """The object at ``pkg.mod.name``, following re-exports (aliases) statically."""
    if depth > 10:
        return None, dotted_path
    mod, _, name = dotted_path.rpartition(".")
    m = _visit(root, mod)
    if m is None or name not in m.members:
        return None, dotted_path
    obj = m.members[name]
    if obj.is_alias:
        return _follow(root, obj.target_path, depth + 1)
    return obj, dotted_path


def _all_names(module) -> list[str] | None:
    exports = module.exports
    if exports is None:
        return None
    return sorted(str(e) if not hasattr(e, "name") else e.name for e in exports)


def extract(root: Path) -> dict:
    """API records of MODULES from an unpacked wheel's folder (the one holding executorch/)."""
    out: dict = {}
    for dotted in MODULES:
        m = _visit(root, dotted)
        if m is None:
            out[dotted] = {"missing": True}
            continue
        file = _module_file(root, dotted)
        assert file is not None  # _visit found the module
        rec: dict = {"file": str(file.relative_to(root)), "members": {}}
        names = _all_names(m)
        if names is not None:
            rec["__all__"] = names
        if dotted == "executorch.exir":
            for name in EXIR_FOCUS:
                obj, where = _follow(root, f"{dotted}.{name}")
                if obj is not None:
                    rec["members"][name] = {**(_describe(obj) or {}), "defined_in": where.rsplit(".", 1)[0]}
        else:
            for name, obj in m.members.items():
                if name.startswith("_"):
                    continue
                d = _describe(obj)
                if d is not None and d["kind"] != "attribute":
                    rec["members"][name] = d
                elif d is not None and name.isupper():
                    rec["members"][name] = d  # module constants
        out[dotted] = rec
    return out


def _unpacked_root(release: str, wheel_dir: Path | None, tmp: Path) -> Path:
    from abi_checks.tools.make_baseline import find_or_download_wheel

    wheel = find_or_download_wheel(release, wheel_dir or tmp / "wheels")
    root = tmp / "unpacked"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(root, members=[n for n in z.namelist() if n.endswith(".py")])
    return root


def make(release: str, wheel_dir: Path | None) -> Path:
    import griffe

    try:
        from importlib.metadata import version

        gv = version("griffe")
    except Exception:  # noqa: BLE001  # pragma: no cover  (any failure: fall back to the attribute)
        gv = getattr(griffe, "__version__", "unknown")
    with tempfile.TemporaryDirectory(prefix=f"et-pyapi-{release}-") as tmp:
        root = _unpacked_root(release, wheel_dir, Path(tmp))
        doc = {
            "release": release,
            "generated": _dt.date.today().isoformat(),
            "generated_by": (
                f"python -m abi_checks.tools.python_api {release} (griffe {gv}, static: nothing imported)"
            ),
            "modules": extract(root),
        }
    out = PYTHON_API_DIR / f"{release}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    return out


# ---------------------------------------------------------------- comparison (no griffe)


def _param_text(p: dict) -> str:
    t = p["name"]
    if p.get("annotation"):
        t += f": {p['annotation']}"
    if p.get("default") is not None:
        t += f" = {p['default']}"
    return t


def describe_change(old: dict, new: dict) -> str:
    """A short account of how a function's signature changed."""
    if old.get("kind") != new.get("kind") or "parameters" not in old or "parameters" not in new:
        return f"{old.get('signature', old.get('kind'))} → {new.get('signature', new.get('kind'))}"
    op, np_ = {p["name"]: p for p in old["parameters"]}, {p["name"]: p for p in new["parameters"]}
    out = [f"added parameter `{_param_text(p)}`" for n, p in np_.items() if n not in op]
    out += [f"removed parameter `{_param_text(p)}`" for n, p in op.items() if n not in np_]
    for n, a in op.items():
        if n in np_:
            b = np_[n]
            for field in ("kind", "annotation", "default"):
                if a.get(field) != b.get(field):
                    out.append(f"`{n}` {field} `{a.get(field)}` → `{b.get(field)}`")
    if [p["name"] for p in old["parameters"] if p["name"] in np_] != [
        p["name"] for p in new["parameters"] if p["name"] in op
    ]:
        out.append("parameter order changed")
    if old.get("returns") != new.get("returns"):
        out.append(f"returns `{old.get('returns')}` → `{new.get('returns')}`")
    if old.get("decorators") != new.get("decorators"):
        out.append(f"decorators {old.get('decorators')} → {new.get('decorators')}")
    return "; ".join(out) or "signature text changed"


def _records(doc: dict) -> dict[str, dict]:
    recs: dict[str, dict] = {}

    def walk(prefix: str, members: dict) -> None:
        for name, d in members.items():
            recs[f"{prefix}{name}"] = d
            if d["kind"] == "class":
                walk(f"{prefix}{name}.", d.get("members", {}))

    for mod, rec in doc["modules"].items():
        if not rec.get("missing"):
            walk(f"{mod}:", rec.get("members", {}))
    return recs


def flatten(doc: dict) -> dict[str, str]:
    """``module:Class.method`` -> description string (kind + signature/bases)."""
    flat: dict[str, str] = {}

    def walk(prefix: str, members: dict) -> None:
        for name, d in members.items():
            key = f"{prefix}{name}"
            if d["kind"] == "class":
                flat[key] = f"class({', '.join(d['bases'])})"
                walk(key + ".", d.get("members", {}))
            elif d["kind"] in ("function", "property"):
                flat[key] = f"{d['kind']} {d['signature']} {d.get('decorators', [])}"
            else:
                flat[key] = f"attribute: {d.get('annotation', '')}"

    for mod, rec in doc["modules"].items():
        if rec.get("missing"):
            continue
        walk(f"{mod}:", rec.get("members", {}))
    return flat


def compare(old: dict, new: dict) -> dict[str, list]:
    a, b = flatten(old), flatten(new)
    return {
        "added": sorted(set(b) - set(a)),
        "removed": sorted(set(a) - set(b)),
        "changed": sorted((k, a[k], b[k]) for k in set(a) & set(b) if a[k] != b[k]),
    }


def _short(key: str) -> str:
    mod, _, name = key.partition(":")
    return f"`{mod.removeprefix('executorch.')}:{name}`"


def table() -> str:
    from packaging.version import Version

    docs = sorted(
        (json.loads(p.read_text()) for p in PYTHON_API_DIR.glob("*.json")),
        key=lambda d: Version(d["release"]),
    )
    from conformance.markdown_table import markdown_table

    rows = []
    for old, new in itertools.pairwise(docs):
        c = compare(old, new)
        ro, rn = _records(old), _records(new)
        ch = [f"{_short(k)}: {describe_change(ro[k], rn[k])}" for k, _, _ in c["changed"]]
        rows.append(
            [
                f"{old['release']} → {new['release']}",
                "<br>".join(map(_short, c["added"])) or "—",
                "<br>".join(map(_short, c["removed"])) or "—",
                "<br>".join(ch) or "—",
            ]
        )
    return "\n".join(markdown_table(["from → to", "added", "removed", "changed signature"], rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("releases", nargs="*")
    ap.add_argument("--wheel-dir", type=Path)
    ap.add_argument("--table", action="store_true", help="print the change table of the stored files")
    args = ap.parse_args(argv)
    if args.table:
        print(table())
        return 0
    if not args.releases:
        ap.error("give releases, or --table")
    for r in args.releases:
        print(make(r, args.wheel_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
