#!/usr/bin/env python3
"""The suite's own vendor API, snapshotted per suite version, and the check that keeps its promises
(docs/api-stability.md).

    python -m abi_checks.tools.suite_api snapshot                     # abi_checks/suite_api/<SUITE_VERSION>.json
    python -m abi_checks.tools.suite_api snapshot --ref COMMIT        # the same for a commit's tree (a release)
    python -m abi_checks.tools.suite_api check [--root DIR]           # what scripts/lint.sh runs

The surface is everything a vendor writes against: the Python modules below (griffe, inspecting the
imported modules, so dataclass fields come with their real defaults), the kit's C++ headers
(cxxheaderparser over the preprocessed headers; the ``detail`` namespaces left out), the
``executorch-conformance`` command line (its argparse parser) and the deprecations in force
(conformance/deprecations.py). A snapshot is made in a process of its own with the tree's own
packages first on the path, so a commit's tree is read as it was.

``check`` fails when
- the surface of the tree differs from the committed snapshot of its suite version (an addition or
  change not recorded: run ``snapshot`` and commit it), or
- against the newest committed snapshot of an earlier suite version, a member is removed or changed
  incompatibly (a parameter removed, renamed, reordered or made required, a default dropped, a base
  class dropped, a constant's value changed, a C++ signature, type or enum value changed, a command-line
  option removed or made required) unless both (1) the version of its part (the suite's, or the kit's
  for backend_kit) has a new minor or major number, and (2) a deprecation lists the member in ``api``,
  issued in that earlier version or before, and an error from this version on.
Additions are compatible.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SNAPSHOT_DIR = REPO / "abi_checks" / "suite_api"

#: module -> the members that are vendor API (None: every public member defined there)
PYTHON_MODULES: dict[str, tuple[str, ...] | None] = {
    "conformance": ("__version__",),
    "conformance.descriptor": (
        "ENTRY_POINT_GROUP",
        "DescriptorError",
        "RecordedError",
        "SampleModel",
        "NamedDataSupport",
        "QuantizedSupport",
        "DynamicShapesSupport",
        "CompositionSupport",
        "MutableStateSupport",
        "BackendDescriptor",
        "CAPABILITY_ABSENT",
        "available_backends",
        "load_descriptor",
    ),
    "conformance.operators": ("OperatorDeclaration", "OperatorSupport"),
    "conformance.deprecations": ("SuiteDeprecationWarning",),
    "conformance.testing": (
        "check_backend",
        "parametrize_with_checks",
        "BackendNotConformant",
        "ConformanceCheck",
    ),
    "conformance.expectations": ("Expectations", "ExpectationsError", "load_expectations"),
    "conformance.report": (
        "Report",
        "Backend",
        "Result",
        "ResultRow",
        "CarriedOver",
        "ProfileRow",
        "Options",
        "OperatorRow",
        "RuntimeLibrary",
        "SCHEMA",
        "MODES",
    ),
    "conformance.version": ("REPORT_SCHEMA", "REPORT_SCHEMA_VERSION"),
    "backend_kit": ("__version__", "cmake_dir", "include_dir"),
    "backend_kit.header": None,
    "backend_kit.runtime": None,
}
#: Modules whose classes vendors read but do not build (the report's sections): their constructors are
#: recorded as the set of field names (order and defaults are the suite's business), and their class
#: constants are left out.
READ_ONLY = {"conformance.report"}
CPP_HEADERS = ("header.h", "register.h", "parallel_crc.h")
KEEP_DUNDER = {"__init__", "__call__", "__post_init__", "__init_subclass__"}

_SITECUSTOMIZE = """\
import sys
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
"""


# --------------------------------------------------------------------------- extraction (in a process of its own)


def _python_api():
    """abi_checks/tools/python_api.py (the ExecuTorch surface tool), by path: its signature and member
    descriptions are reused, whatever tree is on the path."""
    spec = importlib.util.spec_from_file_location("_et_python_api", HERE / "python_api.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _python_surface() -> dict[str, Any]:
    import griffe

    describe = _python_api()._describe
    out: dict[str, Any] = {}
    for dotted, wanted in PYTHON_MODULES.items():
        try:
            module = griffe.inspect(dotted)
        except ImportError:
            out[dotted] = {"missing": True}
            continue
        members: dict[str, Any] = {}
        names = (
            wanted
            if wanted is not None
            else [
                n
                for n in module.members
                if not n.startswith("_") and n != "annotations"  # from __future__
            ]
        )
        for name in names:
            obj = module.members.get(name)
            if obj is None:
                continue
            if isinstance(obj, griffe.Alias):
                if wanted is None:
                    continue  # a whole module's surface is what it defines
                where, _, target = obj.target_path.rpartition(".")
                obj = griffe.inspect(where).members[target]  # a re-export: described where it is defined
            record = _member(obj, describe, dotted in READ_ONLY)
            if record is not None:
                members[name] = record
        out[dotted] = {"members": members}
    return out


def _member(obj, describe, read_only: bool = False) -> dict[str, Any] | None:
    """python_api's description, with dunders other than KEEP_DUNDER left out of classes (griffe's
    inspection lists every inherited dunder) and object addresses removed from reprs; for a class of a
    READ_ONLY module, its constructor as field names and no class constants."""
    record = describe(obj)
    if record is None:
        return None
    if record["kind"] == "class":
        members = {
            k: v for k, v in record["members"].items() if not (k.startswith("__") and k not in KEEP_DUNDER)
        }
        if read_only:
            members = {k: v for k, v in members.items() if not k.isupper()}
            if "__init__" in members:
                names = [p["name"] for p in members["__init__"]["parameters"] if p["name"] != "self"]
                members["__init__"] = {"kind": "fields", "names": sorted(names)}
        record["members"] = members
        record["bases"] = [b for b in record["bases"] if b != "object"]
    return json.loads(_stable(json.dumps(record)))


def _stable(text: str) -> str:
    import re

    return re.sub(r" at 0x[0-9a-f]+", "", text)


def _cpp_surface(root: Path) -> dict[str, Any]:
    from cxxheaderparser.preprocessor import make_gcc_preprocessor
    from cxxheaderparser.simple import ParserOptions, parse_file

    include = root / "kit" / "backend_kit" / "include"
    et = Path(importlib.util.find_spec("executorch").submodule_search_locations[0]) / "include"  # type: ignore[union-attr,index]
    c10 = et / "executorch" / "runtime" / "core" / "portable_type" / "c10"
    # The include paths and definitions ExecuTorch's CMake package gives a backend (register.h includes
    # the runtime's backend interface).
    preprocessor = make_gcc_preprocessor(
        gcc_args=[os.environ.get("CXX", "g++"), "-std=c++17"],
        include_paths=[str(include), str(et), str(c10)],
        defines=["C10_USING_CUSTOM_GENERATED_MACROS"],
    )
    out: dict[str, Any] = {}
    for header in CPP_HEADERS:
        path = include / "backend_kit" / header
        if not path.exists():
            continue
        parsed = parse_file(str(path), options=ParserOptions(preprocessor=preprocessor))
        members: dict[str, Any] = {}
        _cpp_walk(parsed.namespace, "", members)
        out[f"backend_kit/{header}"] = {"members": members}
    return out


def _cpp_walk(ns, prefix: str, members: dict[str, Any]) -> None:
    for name, sub in ns.namespaces.items():
        if name != "detail":
            _cpp_walk(sub, f"{prefix}{name}::", members)
    for f in ns.functions:
        # keyed by the parameters a caller must pass; those with a default may be added at the end
        required = ", ".join(p.type.format() for p in f.parameters if p.default is None)
        members[f"{prefix}{f.name.format()}({required})"] = {
            "kind": "function",
            "returns": f.return_type.format() if f.return_type else None,
            "defaulted": [p.type.format() for p in f.parameters if p.default is not None],
        }
    for c in ns.classes:
        name = f"{prefix}{c.class_decl.typename.segments[-1].format()}"
        members[name] = {"kind": c.class_decl.typename.classkey}
        for field in c.fields:
            if field.access != "private" and field.name:
                members[f"{name}::{field.name}"] = {"kind": "field", "type": field.type.format()}
        for m in c.methods:
            if m.access != "private":
                sig = ", ".join(p.type.format() for p in m.parameters)
                members[f"{name}::{m.name.format()}({sig})"] = {
                    "kind": "method",
                    "returns": m.return_type.format() if m.return_type else None,
                }
    for v in ns.variables:
        members[f"{prefix}{v.name.format()}"] = {
            "kind": "constant",
            "type": v.type.format(),
            "value": v.value.format() if v.value is not None else None,
        }
    for e in ns.enums:
        name = f"{prefix}{e.typename.segments[-1].format()}"
        members[name] = {"kind": "enum", "values": [v.name for v in e.values]}


def _cli_surface() -> dict[str, Any]:
    from conformance.cli import build_parser

    out: dict[str, Any] = {}

    def walk(parser, prefix: str) -> None:
        for action in parser._actions:  # argparse keeps its actions here; there is no public accessor
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{prefix} {name}".strip())
            elif not isinstance(action, argparse._HelpAction):
                name = max(action.option_strings, key=len) if action.option_strings else action.dest
                out[f"{prefix} {name}"] = {
                    "kind": "option" if action.option_strings else "positional",
                    "spellings": sorted(action.option_strings),
                    "required": bool(action.required),
                    "takes_value": action.nargs != 0,
                }

    walk(build_parser(), "")
    return out


def _deprecations() -> list[dict[str, Any]]:
    try:
        from conformance.deprecations import DEPRECATIONS
    except ImportError:
        return []
    return [
        {"key": d.key, "since": d.since, "error_in": d.error_in, "api": list(d.api)}
        for d in DEPRECATIONS.values()
    ]


def extract(root: Path) -> dict[str, Any]:
    """The surface of the tree at ``root`` (run in a process whose path starts with it)."""
    import griffe

    from conformance.version import SUITE_VERSION

    kit_version = None
    kit_init = root / "kit" / "backend_kit" / "__init__.py"
    if kit_init.exists():
        import backend_kit

        kit_version = backend_kit.__version__
    return {
        "suite_version": SUITE_VERSION,
        "kit_version": kit_version,
        "generated_by": f"python -m abi_checks.tools.suite_api snapshot (griffe {griffe.__version__ if hasattr(griffe, '__version__') else _version('griffe')}, cxxheaderparser {_version('cxxheaderparser')})",
        "python": _python_surface(),
        "cpp": _cpp_surface(root),
        "cli": _cli_surface(),
        "deprecations": _deprecations(),
    }


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


def surface_of(root: Path) -> dict[str, Any]:
    """``extract(root)`` in a process of its own, with the tree's packages (and its kit) first on the path."""
    with tempfile.TemporaryDirectory(prefix="suite-api-") as tmp:
        (Path(tmp) / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        env = {
            **os.environ,
            # the tree's packages first; this repository last (python_api.py imports abi_checks)
            "PYTHONPATH": os.pathsep.join([tmp, str(root), str(root / "kit"), str(REPO)]),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "extract", "--root", str(root)],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"reading the vendor API of {root} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


# --------------------------------------------------------------------------- comparison


def flatten(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """'py:module:Class.member', 'cpp:header:name', 'cli:run --option' -> its record."""
    flat: dict[str, dict[str, Any]] = {}

    def walk(prefix: str, members: dict[str, Any]) -> None:
        for name, d in members.items():
            flat[f"{prefix}{name}"] = d
            if d.get("kind") == "class" and "members" in d:
                walk(f"{prefix}{name}.", d["members"])

    for module, rec in doc["python"].items():
        if not rec.get("missing"):
            walk(f"py:{module}:", rec["members"])
    for header, rec in doc["cpp"].items():
        for name, d in rec["members"].items():
            flat[f"cpp:{header}:{name}"] = d
    for name, d in doc["cli"].items():
        flat[f"cli:{name}"] = d
    return flat


def _summary(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "members"}


#: Names whose value is a version that moves with releases by design (a new report schema is read beside the
#: old ones by verify, docs/report-schema.md): a new value is not a break of a vendor's code.
VERSION_VALUES = (":__version__", ":REPORT_SCHEMA_VERSION", ":Report.schema_version", ":SUITE_VERSION")


def breaking(old: dict[str, Any], new: dict[str, Any] | None, key_is_version: bool = False) -> str | None:
    """Why the change from ``old`` to ``new`` (None: removed) breaks a vendor's code, or None
    (``key_is_version``: a ``__version__``, whose value changes with every release)."""
    if new is None:
        return "removed"
    if old.get("kind") != new.get("kind"):
        return f"was a {old.get('kind')}, is a {new.get('kind')}"
    kind = old.get("kind")
    if kind in ("function", "property") and "parameters" in old:
        return _parameters_break(old["parameters"], new["parameters"])
    if kind == "class":
        lost = [b for b in old.get("bases", []) if b not in new.get("bases", [])]
        return f"no longer derives from {', '.join(lost)}" if lost else None
    if kind == "attribute":
        if "value" not in old or old["value"] == new.get("value") or key_is_version:
            return None
        return f"value {old['value']} -> {new.get('value')}"
    if kind == "fields":
        lost = [n for n in old["names"] if n not in new["names"]]
        return f"fields {lost} removed" if lost else None
    if kind in ("field", "constant"):
        changed = [k for k in ("type", "value") if old.get(k) != new.get(k)]
        return "; ".join(f"{k} {old.get(k)} -> {new.get(k)}" for k in changed) or None
    if kind == "method" or (kind == "function" and "returns" in old and "parameters" not in old):
        if old.get("returns") != new.get("returns"):
            return f"returns {old.get('returns')} -> {new.get('returns')}"
        kept = old.get("defaulted", [])
        if new.get("defaulted", [])[: len(kept)] != kept:
            return f"parameters with defaults {kept} -> {new.get('defaulted', [])}"
        return None
    if kind == "enum":
        lost = [v for v in old["values"] if v not in new["values"]]
        order = [v for v in new["values"] if v in old["values"]] != old["values"]
        return f"enumerators {lost} removed" if lost else ("enumerators reordered" if order else None)
    if kind in ("option", "positional"):
        if not old["required"] and new["required"]:
            return "is now required"
        lost = [s for s in old["spellings"] if s not in new["spellings"]]
        if lost:
            return f"spelling {', '.join(lost)} removed"
        return "takes a value now" if old["takes_value"] != new["takes_value"] else None
    return None


def _parameters_break(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> str | None:
    by_name = {p["name"]: p for p in new}
    variadic = {p["kind"] for p in new if p["kind"] in ("variadic positional", "variadic keyword")}
    for i, p in enumerate(old):
        if p["kind"] in ("variadic positional", "variadic keyword"):
            if p["kind"] not in variadic:
                return f"parameter {p['name']!r} ({p['kind']}) removed"
            continue
        q = by_name.get(p["name"])
        if q is None:
            return f"parameter {p['name']!r} removed"
        if q["kind"] != p["kind"] and not (
            p["kind"] == "keyword-only" and q["kind"] == "positional or keyword"
        ):
            return f"parameter {p['name']!r} was {p['kind']}, is {q['kind']}"
        if p["kind"] != "keyword-only" and i < len(new) and new[i]["name"] != p["name"]:
            return f"parameter {p['name']!r} moved from position {i}"
        if p.get("default") is not None and q.get("default") is None:
            return f"parameter {p['name']!r} lost its default {p['default']}"
        if p.get("default") is not None and q.get("default") != p.get("default"):
            return f"parameter {p['name']!r} default {p['default']} -> {q['default']}"
    old_names = {p["name"] for p in old}
    added = [
        p["name"]
        for p in new
        if p["name"] not in old_names
        and p.get("default") is None
        and p["kind"] not in ("variadic positional", "variadic keyword")
    ]
    return f"new required parameter {added[0]!r}" if added else None


def _part(key: str) -> str:
    return "kit" if key.startswith(("py:backend_kit", "cpp:")) else "suite"


def _release(version: str) -> tuple[int, ...]:
    from packaging.version import Version

    return (Version(version).release + (0, 0, 0))[:3]


def _bumped(old: str | None, new: str | None) -> bool:
    """Whether ``new`` has a new minor or major number over ``old``."""
    if old is None or new is None:
        return True
    return _release(new)[:2] > _release(old)[:2]


def problems(previous: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """The breaks from ``previous`` (a released version's snapshot) to ``current`` that the policy does
    not allow, each naming the member, why it breaks and what is missing."""
    old, new = flatten(previous), flatten(current)
    allowed = {}
    for d in current.get("deprecations", []):
        for member in d["api"]:
            allowed[member] = d
    found = []
    for key in sorted(old):
        parent = key.rsplit(".", 1)[0] if key.startswith("py:") and "." in key.split(":", 2)[2] else None
        if parent is not None and parent in old and parent not in new:
            continue  # the class's removal is named once
        why = breaking(old[key], new.get(key), key.endswith(VERSION_VALUES))
        if why is None:
            continue
        part = _part(key)
        pv, cv = previous[f"{part}_version"], current[f"{part}_version"]
        member = key.split(":", 1)[1]
        if not _bumped(pv, cv):
            found.append(
                f"{member}: {why}, but the {part} version goes from {pv} to {cv}: a break needs a new minor or "
                f"major version, and a deprecation first"
            )
            continue
        d = allowed.get(member)
        if d is None or _release(d["since"]) > _release(pv) or _release(d["error_in"]) > _release(cv):
            found.append(
                f"{member}: {why} in {part} {cv}, without a deprecation: add one to conformance/deprecations.py "
                f"naming it in api, issued in {pv} or earlier (a warning naming the replacement for at least one "
                f"minor release), error_in {cv}"
            )
    return found


# --------------------------------------------------------------------------- files and commands


def _snapshots(directory: Path = SNAPSHOT_DIR) -> dict[str, dict[str, Any]]:
    found = {}
    for path in directory.glob("*.json"):
        doc = json.loads(path.read_text())
        found[doc["suite_version"]] = doc
    return dict(sorted(found.items(), key=lambda kv: _release(kv[0])))


def _write(doc: dict[str, Any], directory: Path = SNAPSHOT_DIR) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    out = directory / f"{doc['suite_version']}.json"
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return out


def snapshot(ref: str | None) -> Path:
    if ref is None:
        doc = surface_of(REPO)
    else:
        with tempfile.TemporaryDirectory(prefix="suite-api-tree-") as tmp:
            tree = Path(tmp) / "tree"
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(tree), ref],
                cwd=REPO,
                check=True,
                capture_output=True,
            )
            try:
                doc = surface_of(tree)
            finally:
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(tree)],
                    cwd=REPO,
                    check=True,
                    capture_output=True,
                )
        doc["commit"] = subprocess.run(
            ["git", "rev-parse", ref], cwd=REPO, check=True, capture_output=True, text=True
        ).stdout.strip()
    doc["generated"] = _dt.date.today().isoformat()
    return _write(doc)


def check(root: Path, directory: Path = SNAPSHOT_DIR) -> list[str]:
    """Every problem of the tree at ``root`` against the committed snapshots (see the module docstring)."""
    current = surface_of(root)
    snapshots = _snapshots(directory)
    version = current["suite_version"]
    found = []
    committed = snapshots.get(version)
    if committed is None:
        found.append(
            f"no snapshot of suite {version}'s vendor API: run python -m abi_checks.tools.suite_api snapshot "
            f"and commit abi_checks/suite_api/{version}.json"
        )
    else:
        a, b = flatten(committed), flatten(current)
        drift = sorted(set(a) ^ set(b)) + sorted(k for k in set(a) & set(b) if a[k] != b[k])
        drift += [k for k in ("kit_version", "deprecations") if committed.get(k) != current.get(k)]
        if drift:
            found.append(
                f"the vendor API differs from abi_checks/suite_api/{version}.json in {len(drift)} members "
                f"({', '.join(k.split(':', 1)[-1] for k in drift[:8])}{', ...' if len(drift) > 8 else ''}): run "
                "python -m abi_checks.tools.suite_api snapshot and commit it (the check below judges the change)"
            )
    earlier = [v for v in snapshots if _release(v) < _release(version)]
    if earlier:
        found += problems(snapshots[earlier[-1]], current)
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snapshot", help="write abi_checks/suite_api/<version>.json")
    snap.add_argument("--ref", help="a commit whose tree to snapshot (default: this tree)")
    chk = sub.add_parser("check", help="the tree's vendor API against the committed snapshots")
    chk.add_argument("--root", type=Path, default=REPO)
    chk.add_argument("--snapshots", type=Path, default=SNAPSHOT_DIR)
    ext = sub.add_parser("extract", help=argparse.SUPPRESS)
    ext.add_argument("--root", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.command == "extract":
        json.dump(extract(args.root), sys.stdout)
        return 0
    if args.command == "snapshot":
        print(snapshot(args.ref))
        return 0
    found = check(args.root.resolve(), args.snapshots)
    for problem in found:
        print(f"suite_api: {problem}", file=sys.stderr)
    if not found:
        print(f"suite_api: the vendor API keeps its promises ({len(_snapshots(args.snapshots))} snapshots)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
