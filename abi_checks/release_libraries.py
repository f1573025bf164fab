"""The shared libraries one ExecuTorch release's wheel installs: abi_checks/libraries/<release>.json.

Each record: path below site-packages, SONAME, NEEDED, RUNPATH/RPATH, sha256 and the ExecuTorch
symbols it exports; plus which libraries ``import executorch.runtime`` loads and which one
holds the backend registry. Made by ``python -m abi_checks.tools.make_libraries RELEASE``. A
baseline given as a file, for a release with no such record, falls back to what the baseline
holds: its shipped libraries (names only) and the registry library's exports.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

from abi_checks import LIBRARIES_DIR


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in 1 MiB chunks: how a release's own library is recognised."""
    import hashlib

    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclasses.dataclass(frozen=True)
class ReleaseLibrary:
    path: str  # below site-packages: executorch/lib/libexecutorch.so
    soname: str | None
    needed: tuple[str, ...]
    runpath: tuple[str, ...]
    rpath: tuple[str, ...]
    sha256: str | None
    exports: frozenset[str]


@dataclasses.dataclass(frozen=True)
class ReleaseLibraries:
    release: str
    registry_library: str
    loaded_at_import: tuple[str, ...]
    libraries: dict[str, ReleaseLibrary]  # by path
    complete: bool  # False: reconstructed from a baseline (other libraries' exports unknown)

    def names(self) -> set[str]:
        """Every file name and SONAME the release ships (what a NEEDED entry would say)."""
        out = set()
        for lib in self.libraries.values():
            out.add(Path(lib.path).name)
            if lib.soname:
                out.add(lib.soname)
        return out

    def by_sha256(self, digest: str) -> ReleaseLibrary | None:
        return next((lib for lib in self.libraries.values() if lib.sha256 == digest), None)


def _from_record(doc: dict) -> ReleaseLibraries:
    libs = {
        r["path"]: ReleaseLibrary(
            r["path"],
            r.get("soname"),
            tuple(r.get("needed", [])),
            tuple(r.get("runpath", [])),
            tuple(r.get("rpath", [])),
            r.get("sha256"),
            frozenset(r.get("exports", [])),
        )
        for r in doc["libraries"]
    }
    return ReleaseLibraries(
        doc["release"], doc["registry_library"]["path"], tuple(doc.get("loaded_at_import", [])), libs, True
    )


def _from_baseline(base: dict) -> ReleaseLibraries:
    registry = base["runtime_library"]["path"]
    libs = {}
    for lib in base.get("shipped_libraries", []):
        exports = frozenset(base["symbols"]["exported"]) if lib["path"] == registry else frozenset()
        libs[lib["path"]] = ReleaseLibrary(lib["path"], lib.get("soname"), (), (), (), None, exports)
    if registry not in libs:
        libs[registry] = ReleaseLibrary(
            registry, base["symbols"].get("soname"), (), (), (), None, frozenset(base["symbols"]["exported"])
        )
    return ReleaseLibraries(base["release"], registry, (registry,), libs, False)


def release_libraries(base: dict) -> ReleaseLibraries:
    """The libraries of the release of baseline ``base``: the committed record when there is one
    for that release (and it is the same wheel), else what the baseline itself holds."""
    record = _record(base["release"])
    if record is not None and (not base.get("wheel_sha256") or record[0] == base.get("wheel_sha256")):
        return record[1]
    return _from_baseline(base)


@functools.lru_cache(maxsize=16)
def _record(release: str) -> tuple[str | None, ReleaseLibraries] | None:
    """(wheel sha256, libraries) of the committed record of ``release``, read once."""
    path = LIBRARIES_DIR / f"{release}.json"
    if not path.is_file():
        return None
    doc = json.loads(path.read_text())
    return doc.get("wheel_sha256"), _from_record(doc)
