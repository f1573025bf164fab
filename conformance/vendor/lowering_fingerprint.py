"""Vendor-process task ``task_registry.LOWERING_FINGERPRINT``: what the lowering cache's keys hold of the
environment the vendor's code lowers in (``conformance.vendor.lowering_cache``), computed once per run.

It digests: the torch, executorch and suite versions and the suite's own files (the suite is often an
editable install whose version does not change); the files of every top-level package the lowering
uses (the descriptor's functions' modules, the partitioners' classes and their bases, the declared
``python_package`` and ``distribution``, and a ``sitecustomize`` or ``usercustomize`` if one ran): the
RECORD hashes of a distribution installed from a wheel, else the contents of the package's files
(``__pycache__`` left out); the name and version of every installed distribution (an upgrade of a
library the backend calls, such as its compiler, changes the key); and the values of the environment
variables the descriptor names in ``lowering_environment``. The runtime libraries the descriptor names
(``runtime_libraries()``) are left out everywhere, their RECORD lines included: rebuilding only the C++
runtime keeps every key, so the next run lowers nothing again. So are the native build artifacts a
wheel may ship beside the runtime (``NATIVE_BUILD_SUFFIXES``: static libraries, C/C++ headers, CMake
package files), which no Python process loads and every C++ change rewrites; a Python extension module
(a compiler the partitioner calls) is not one of them and stays in the digest.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from conformance.vendor.bootstrap import descriptor
from conformance.vendor.core_tasks import partitioners
from conformance.vendor.envelope import VendorError, vendor_call

#: Files a wheel may ship for C++ builds against the runtime, never loaded by Python: left out.
NATIVE_BUILD_SUFFIXES = (".a", ".lib", ".h", ".hh", ".hpp", ".hxx", ".cmake", ".pc")


def _left_out(path: str | os.PathLike[str], excluded: set[str]) -> bool:
    """Whether a file stays out of the digest: a runtime library, a native build artifact, bytecode."""
    text = str(path)
    if "__pycache__" in Path(text).parts or text.endswith(NATIVE_BUILD_SUFFIXES):
        return True
    names = {os.path.basename(e) for e in excluded}
    return (
        os.path.basename(text) in names and os.path.realpath(text) in excluded
    )  # realpath only if it may be


def _runtime_libraries() -> set[str]:
    try:
        listed = vendor_call("runtime_libraries()", descriptor().runtime_libraries)
        return {os.path.realpath(str(p)) for p in listed}
    except (VendorError, TypeError):
        return set()


def _functions(d: Any) -> list[Any]:
    found = [d.make_partitioners, d.load_runtime, d.runtime_libraries, *(m.make for m in d.sample_models)]
    for name in ("named_data", "quantized", "dynamic_shapes", "composition"):
        support = getattr(d, name, None)
        if support is not None:
            found += [
                getattr(support, f.name) for f in _fields(support) if callable(getattr(support, f.name))
            ]
    return [f for f in found if f is not None]


def _fields(obj: Any) -> list[Any]:
    import dataclasses

    return list(dataclasses.fields(obj)) if dataclasses.is_dataclass(obj) else []


def top_level_packages() -> list[str]:
    """The top-level modules whose files decide what the lowering makes (see the module docstring)."""
    d = descriptor()
    modules = {getattr(f, "__module__", None) for f in _functions(d)}
    which = ["default"] + (["named_data"] if d.named_data is not None else [])
    for w in which:
        for p in partitioners(w):
            modules.update(c.__module__ for c in type(p).__mro__)
    modules.add(d.python_package)
    modules.update(m for m in ("sitecustomize", "usercustomize") if m in sys.modules)
    tops = {m.split(".")[0] for m in modules if isinstance(m, str) and m}
    return sorted(t for t in tops if t not in sys.stdlib_module_names and t not in ("builtins", "__main__"))


def _editable(dist: metadata.Distribution) -> bool:
    text = dist.read_text("direct_url.json")
    if not text:
        return False
    try:
        return bool(json.loads(text).get("dir_info", {}).get("editable"))
    except (ValueError, AttributeError):
        return False


def _record_digest(dist: metadata.Distribution, excluded: set[str], digest: Any) -> bool:
    """Adds the RECORD lines of ``dist`` (those of ``excluded`` files and of __pycache__ left out); False
    if it has no RECORD."""
    text = dist.read_text("RECORD")
    if text is None:
        return False
    digest.update(f"dist:{dist.metadata['Name']}\n".encode())
    for line in sorted(text.splitlines()):
        path = line.split(",", 1)[0]
        if not path or _left_out(str(dist.locate_file(path)), excluded):
            continue
        digest.update(line.encode() + b"\n")
    return True


def _files_digest(roots: list[Path], excluded: set[str], digest: Any) -> None:
    """Adds every file under ``roots`` (relative name and contents), __pycache__ and ``excluded`` left out."""
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            if _left_out(path, excluded):
                continue
            try:
                data = path.read_bytes()
            except OSError:
                continue
            name = path.name if path == root else str(path.relative_to(root))
            digest.update(f"file:{name}:{len(data)}\n".encode())
            digest.update(hashlib.sha256(data).digest())


def package_digest(top: str, excluded: set[str], owners: Mapping[str, list[str]]) -> str:
    """The digest of top-level package ``top``'s files (see the module docstring)."""
    digest = hashlib.sha256(f"package:{top}\n".encode())
    dists = []
    for name in sorted(set(owners.get(top, ()))):
        try:
            dists.append(metadata.distribution(name))
        except metadata.PackageNotFoundError:
            continue
    wheel = [d for d in dists if not _editable(d)]
    if wheel and all(_record_digest(d, excluded, digest) for d in wheel) and len(wheel) == len(dists):
        return digest.hexdigest()
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return digest.hexdigest()
    if spec.submodule_search_locations:
        roots = [Path(p) for p in spec.submodule_search_locations]
    elif spec.origin and os.path.isfile(spec.origin):
        roots = [Path(spec.origin)]
    else:
        roots = []
    _files_digest(roots, excluded, digest)
    return digest.hexdigest()


def suite_digest() -> str:
    """A digest of the suite's own installed files (its source, its version.py among them)."""
    digest = hashlib.sha256(b"suite\n")
    _files_digest([Path(__file__).resolve().parent.parent], set(), digest)
    return digest.hexdigest()


def lowering_fingerprint() -> dict[str, Any]:
    """{'digest': the fingerprint, 'packages': top-level package -> its digest}."""
    import torch
    from executorch.version import __version__ as executorch_version

    d = descriptor()
    excluded = _runtime_libraries()
    owners = metadata.packages_distributions()
    tops = top_level_packages()
    if d.distribution:
        try:
            dist = metadata.distribution(d.distribution)
            for top in (dist.read_text("top_level.txt") or "").split():
                if top not in tops:
                    tops.append(top)
        except metadata.PackageNotFoundError:
            pass
    packages = {top: package_digest(top, excluded, owners) for top in sorted(tops)}
    installed = sorted(
        {f"{dist.metadata['Name']}=={dist.version}".lower() for dist in metadata.distributions()}
    )
    names = sorted(getattr(d, "lowering_environment", None) or ())
    parts = {
        "torch": torch.__version__,
        "executorch": executorch_version,
        "suite": suite_digest(),
        "packages": packages,
        "installed": installed,
        "environment": {name: os.environ.get(name) for name in names},
    }
    text = json.dumps(parts, sort_keys=True)
    return {"digest": hashlib.sha256(text.encode()).hexdigest(), "packages": packages}
