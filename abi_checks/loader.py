"""Where the dynamic loader binds a library's imports, for that library inside its package.

A model of glibc's ``ld.so`` (ld.so(8); glibc ``elf/dl-load.c``, ``dl-deps.c``, ``dl-lookup.c``)
for one library ``dlopen()``ed into a Python process that runs one ExecuTorch release:

- **Files.** The package is a directory tree: site-packages (an installed library), an unpacked
  wheel (every file in it), or the library's own folder. Its ``executorch/`` folder is replaced by
  the release's libraries (abi_checks/libraries/<release>.json), so a library is judged against
  the release it would run with, not the one installed here. Files of other distributions
  (``torch/lib``, ``nvidia/...``) and of the system are found but not read: they export no
  ExecuTorch symbols.
- **Already loaded.** ``import executorch.runtime`` has loaded the runtime extension and what it
  NEEDs (``loaded_at_import``). A NEEDED name that equals the SONAME or file name of a loaded
  object binds to it, before any path is searched (``_dl_map_object``): that is how a backend's
  ``NEEDED libexecutorch.so`` reaches the copy the Python runtime uses.
- **Search order** for a NEEDED name without a slash (one with a slash is a path): DT_RPATH of
  the requesting object and then of the objects that loaded it, each only if it has no
  DT_RUNPATH, and all of them only if the requester has none; LD_LIBRARY_PATH (not modelled: a
  user does not have the vendor's); DT_RUNPATH of the requesting object only (it does not apply
  to the dependencies' dependencies); then the system directories (ld.so.conf, /lib, /usr/lib).
  ``$ORIGIN`` is the directory of the object whose entry it is. A candidate of another ELF class
  or machine is skipped, as the loader does.
- **Scope.** A library's lookup scope is itself followed by its dependencies breadth-first,
  NEEDED order kept (``_dl_map_object_deps``). Python loads extension modules and ctypes
  libraries ``RTLD_LOCAL``, so the runtime's libraries are in nobody's global scope: a library
  reaches them through its own NEEDED entries only. The global scope (the ``python`` program
  and ``RTLD_GLOBAL`` libraries) holds no ExecuTorch symbols and is not modelled. Python's dlopen
  flags include ``RTLD_NOW``: every strong undefined symbol must bind at load.
- **Binding.** A symbol binds to the first object in scope that defines it with GLOBAL, WEAK
  or GNU_UNIQUE binding and default or protected visibility (hidden and internal symbols never
  leave their object). A reference naming version V binds only to a definition of V or in an
  object without version information; an unversioned reference binds to a default (``@@``)
  definition, never to a hidden (``@``) one. An undefined *weak* symbol that nothing defines is
  0, not an error.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from abi_checks.elf import DynSymbol, read_dynamic
from abi_checks.release_libraries import ReleaseLibraries

SITE_DIRS = ("site-packages", "dist-packages")
SUBJECT, PACKAGE, RELEASE, SYSTEM, OUTSIDE = "subject", "package", "release", "system", "outside"


@dataclasses.dataclass(frozen=True)
class Definition:
    version: str | None
    version_hidden: bool


@dataclasses.dataclass(eq=False)
class LoadedObject:
    path: str  # for messages: below the package root (posix) or absolute
    where: str  # SUBJECT, PACKAGE, RELEASE, SYSTEM or OUTSIDE
    directory: str  # what $ORIGIN expands to
    soname: str | None = None
    needed: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    rpath: tuple[str, ...] = ()
    #: mangled name -> its definitions; None: not read (system, another distribution)
    exports: dict[str, list[Definition]] | None = None
    versioned: bool = False  # has symbol version information
    real_path: Path | None = None  # the file, for objects read from disk

    @property
    def file_name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    def defines(self, sym: DynSymbol) -> bool:
        defs = (self.exports or {}).get(sym.name)
        if not defs:
            return False
        for d in defs:
            if sym.version is None and not d.version_hidden:
                return True
            if sym.version is not None and (d.version == sym.version or not self.versioned):
                return True
        return False


def _expand(entry: str, origin: str) -> str | None:
    from conformance.inspection.library_paths import expand

    return expand(entry, Path(origin))


def _header(path: str) -> tuple[int, str] | None:
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            return elf.elfclass, elf["e_machine"]
    except (ELFError, OSError, ValueError):
        return None


class Package:
    """The files a library is loaded among (see the module docstring)."""

    def __init__(
        self,
        root: Path,
        subject_path: Path,
        release: ReleaseLibraries | None,
        own: tuple[Path, ...],
        label: str,
    ) -> None:
        self.root = root.resolve()
        self.subject_path = subject_path.resolve()
        self.release = release
        self._own = tuple(d.resolve() for d in own)  # the package's own folders
        self.label = label  # "site-packages", "the wheel", "the library's folder"
        self._cache: dict[str, LoadedObject | None] = {}
        self._subject_info = read_dynamic(self.subject_path)

    # ------------------------------------------------------------------ construction

    @classmethod
    def on_disk(cls, root: Path, subject: Path, release: ReleaseLibraries | None = None) -> Package:
        """Every file below ``root`` belongs to the package (an unpacked wheel)."""
        root = root.resolve()
        return cls(root, subject, release, (root,), "the wheel")

    @classmethod
    def around(cls, library: Path, release: ReleaseLibraries | None) -> Package:
        """The package ``library`` is installed in: the closest folder named site-packages (its
        top-level folder and the ``*.libs`` folders auditwheel grafts are the package's), or with a
        ``*.dist-info`` folder (an unpacked wheel), else the library's own folder."""
        lib = library.resolve()
        for ancestor in lib.parents:
            if ancestor.name in SITE_DIRS:
                top = ancestor / lib.relative_to(ancestor).parts[0]
                grafted = tuple(d for d in ancestor.glob("*.libs") if d.is_dir())
                return cls(ancestor, lib, release, (top, *grafted), "site-packages")
            if any(ancestor.glob("*.dist-info")):
                return cls(ancestor, lib, release, (ancestor,), "the wheel")
        return cls(lib.parent, lib, release, (lib.parent,), "the library's folder")

    # ------------------------------------------------------------------ lookup

    def display(self, path: Path | str) -> str:
        p = Path(path)
        return p.relative_to(self.root).as_posix() if _below(p, self.root) else p.as_posix()

    def _release_path(self, path: Path) -> str | None:
        """``executorch/...`` below site-packages when ``path`` is in an executorch package."""
        if _below(path, self.root / "executorch"):
            return path.relative_to(self.root).as_posix()
        parts = path.parts
        for i in range(1, len(parts) - 1):
            if parts[i] == "executorch" and parts[i - 1] in SITE_DIRS:
                return "/".join(parts[i:])
        return None

    def subject(self) -> LoadedObject:
        key = str(self.subject_path)
        if self._cache.get(key) is None:
            self._cache[key] = self._read(self.subject_path, SUBJECT)
        obj = self._cache[key]
        assert obj is not None
        return obj

    def object_at(self, path: str) -> LoadedObject | None:
        key = os.path.normpath(path)
        if key not in self._cache:
            self._cache[key] = self._lookup(Path(key))
        return self._cache[key]

    def _lookup(self, path: Path) -> LoadedObject | None:
        if path == self.subject_path:
            return self.subject()
        rel = self._release_path(path) if self.release is not None else None
        if rel is not None and self.release is not None:
            lib = self.release.libraries.get(rel)
            if lib is None:
                return None
            return LoadedObject(
                path=lib.path,
                where=RELEASE,
                directory=str(self.root / Path(lib.path).parent),
                soname=lib.soname,
                needed=lib.needed,
                runpath=lib.runpath,
                rpath=lib.rpath,
                exports={n: [Definition(None, False)] for n in lib.exports},
            )
        if not path.is_file():
            return None
        from conformance.inspection.library_paths import system_dirs

        if any(_below(path, d) for d in self._own):
            return self._read(path, PACKAGE)
        header = _header(str(path))
        if header is None:
            return None
        where = SYSTEM if any(_below(path, Path(d)) for d in system_dirs()) else OUTSIDE
        return LoadedObject(self.display(path), where, str(path.parent))

    def _read(self, path: Path, where: str) -> LoadedObject:
        info = self._subject_info if path == self.subject_path else read_dynamic(path)
        exports: dict[str, list[Definition]] = {}
        for s in info.exported():
            exports.setdefault(s.name, []).append(Definition(s.version, s.version_hidden))
        return LoadedObject(
            path=self.display(path),
            where=where,
            directory=str(path.parent),
            soname=info.soname,
            needed=tuple(info.needed),
            runpath=tuple(info.runpath_entries),
            rpath=tuple(info.rpath_entries),
            exports=exports,
            versioned=any(s.version for s in info.symbols if s.defined),
            real_path=path.resolve(),
        )

    def compatible(self, obj: LoadedObject, path: str) -> bool:
        if obj.where == RELEASE:
            return True
        header = _header(path)
        return header == (self._subject_info.elf_class, self._subject_info.machine)

    def preloaded(self) -> list[LoadedObject]:
        """What ``import executorch.runtime`` of the release has loaded."""
        if self.release is None:
            return []
        out = []
        for rel in self.release.loaded_at_import:
            obj = self.object_at(str(self.root / rel))
            if obj is not None and obj.where == RELEASE:
                out.append(obj)
        return out


def _below(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclasses.dataclass
class Edge:
    requester: LoadedObject
    name: str
    found: LoadedObject | None
    via: str  # "already loaded", "RUNPATH $ORIGIN/../lib", "RPATH ...", "system", "path", "nowhere"
    searched: list[str]  # directories tried, for messages


@dataclasses.dataclass
class Scope:
    order: list[LoadedObject]  # the subject, then its dependencies breadth-first
    edges: list[Edge]

    def provider(self, sym: DynSymbol) -> LoadedObject | None:
        """The object ``sym`` binds to, or None (an undefined symbol is never defined by the same object)."""
        for obj in self.order:
            if obj.defines(sym):
                return obj
        return None

    def unresolved(self) -> list[Edge]:
        return [e for e in self.edges if e.found is None]


def _search_dirs(requester: LoadedObject, chain: list[LoadedObject]) -> list[tuple[str | None, str]]:
    from conformance.inspection.library_paths import system_dirs

    dirs: list[tuple[str | None, str]] = []
    if not requester.runpath:
        for obj in chain:
            if not obj.runpath:
                dirs += [(_expand(e, obj.directory), f"RPATH {e} of {obj.path}") for e in obj.rpath]
    dirs += [(_expand(e, requester.directory), f"RUNPATH {e}") for e in requester.runpath]
    dirs += [(d, "system") for d in system_dirs()]
    return dirs


def resolve(
    name: str,
    requester: LoadedObject,
    chain: list[LoadedObject],
    loaded: list[LoadedObject],
    package: Package,
) -> Edge:
    """Where the loader finds NEEDED ``name`` of ``requester`` (``chain``: it and the objects that loaded it)."""
    if "/" in name:
        found = package.object_at(name) if os.path.isabs(name) else None
        return Edge(requester, name, found, "path", [name])
    for obj in loaded:
        if name in (obj.soname, obj.file_name):
            return Edge(requester, name, obj, "already loaded", [])
    searched = []
    for directory, via in _search_dirs(requester, chain):
        if directory is None:
            continue
        candidate = os.path.join(directory, name)
        searched.append(package.display(directory) if via != "system" else directory)
        found = package.object_at(candidate)
        if found is not None and package.compatible(found, candidate):
            return Edge(requester, name, found, via, searched)
    return Edge(requester, name, None, "nowhere", searched)


def load(subject: LoadedObject, package: Package, preloaded: list[LoadedObject]) -> Scope:
    """The subject's lookup scope, after ``preloaded`` objects were loaded into the process."""
    order = [subject]
    edges: list[Edge] = []
    queue: list[tuple[LoadedObject, list[LoadedObject]]] = [(subject, [subject])]
    while queue:
        obj, chain = queue.pop(0)
        if obj.exports is None:
            continue  # system or another distribution: its own dependencies are not followed
        for name in obj.needed:
            edge = resolve(name, obj, chain, preloaded + order, package)
            edges.append(edge)
            if edge.found is not None and edge.found not in order:
                order.append(edge.found)
                queue.append((edge.found, [edge.found, *chain]))
    return Scope(order, edges)
