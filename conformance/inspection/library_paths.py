"""Where a shared library's dependencies come from: its RPATH/RUNPATH entries and
the resolution of its NEEDED libraries, judged against the installed Python
environment (PKG-5, PKG-6).

Resolution follows the dynamic loader (ld.so(8)) for one library: a NEEDED
name with a slash is a path; otherwise DT_RPATH (only when there is no
DT_RUNPATH), then DT_RUNPATH, then the system's directories (/etc/ld.so.conf
and the default ones). LD_LIBRARY_PATH is deliberately ignored: a user's
machine does not have the vendor's. A candidate must be an ELF file of the
same class and machine, as the loader requires.

Two things the loader does beyond one library's own search path are modelled too:
- load order: a NEEDED name that matches a library already loaded in the process (by its
  SONAME or file name) is that library, whatever the search path says. A backend's runtime
  library is loaded into a process where ExecuTorch's Python runtime (the pybindings extension
  and the libraries it NEEDS) is loaded already, after the runtime libraries named before it;
  ``loaded_closure`` computes what that is.
- layered environments: directories that the environment's ``.pth`` files add to ``sys.path``
  (``site.addsitedir``, a base environment under a thin one) are part of the environment.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import glob
import importlib.util
import json
import os
import platform
import site
import subprocess
import sys
import sysconfig
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from elftools.common.exceptions import ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

#: Always searched by the loader after ld.so.cache (glibc, 64-bit and multiarch layouts).
DEFAULT_DIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64")


@dataclasses.dataclass(frozen=True)
class LibraryInfo:
    path: Path
    elf_class: int
    machine: str
    needed: tuple[str, ...]
    rpath: tuple[str, ...]
    runpath: tuple[str, ...]
    soname: str | None = None


class UnreadableLibrary(ValueError):
    """Not an ELF shared library pyelftools can read."""


def read_library(path: str | os.PathLike) -> LibraryInfo:
    p = Path(path)
    try:
        with open(p, "rb") as f:
            elf = ELFFile(f)
            needed: list[str] = []
            rpath: list[str] = []
            runpath: list[str] = []
            soname = None
            tag: Any  # pyelftools sets needed/rpath/runpath on the tag object by its type
            for section in elf.iter_sections():
                if not isinstance(section, DynamicSection):
                    continue
                for tag in section.iter_tags():
                    if tag.entry.d_tag == "DT_NEEDED":
                        needed.append(tag.needed)
                    elif tag.entry.d_tag == "DT_RPATH":
                        rpath += tag.rpath.split(":")
                    elif tag.entry.d_tag == "DT_RUNPATH":
                        runpath += tag.runpath.split(":")
                    elif tag.entry.d_tag == "DT_SONAME":
                        soname = tag.soname
            return LibraryInfo(
                p,
                elf.elfclass,
                elf["e_machine"],
                tuple(needed),
                tuple(rpath),
                tuple(runpath),
                soname,
            )
    except (ELFError, ValueError, OSError, KeyError) as exc:
        raise UnreadableLibrary(f"{p}: not a readable ELF library ({exc})") from None


def calls_dlopen(path: str | os.PathLike) -> bool:
    """Whether the library calls dlopen itself (dlopen is an undefined symbol of its .dynsym): it may
    open libraries that no NEEDED entry names. False for a file pyelftools cannot read."""
    try:
        with open(path, "rb") as f:
            section = ELFFile(f).get_section_by_name(".dynsym")
            if not isinstance(section, SymbolTableSection):
                return False
            return any(s["st_shndx"] == "SHN_UNDEF" for s in section.get_symbol_by_name("dlopen") or ())
    except (ELFError, OSError, ValueError, KeyError):
        return False


def environment_roots() -> list[Path]:
    """The installed environment: sys.prefix, the site and scheme directories, and the directories its
    .pth files add to sys.path (a layered environment), resolved."""
    roots = {sys.prefix, *site.getsitepackages(), *site_path_entries(sys.executable)}
    with contextlib.suppress(AttributeError):  # some embedded interpreters have no user site
        roots.add(site.getusersitepackages())
    for key in ("purelib", "platlib", "data"):
        roots.add(sysconfig.get_paths().get(key) or sys.prefix)
    return sorted({Path(os.path.realpath(r)) for r in roots if r}, key=str)


@functools.cache
def site_path_entries(executable: str) -> tuple[str, ...]:
    """The directories on ``sys.path`` of a fresh ``executable -I`` (no PYTHONPATH, no current
    directory): the standard library, the site directories and what their .pth files add to it
    (``site.addsitedir``). Asked of the interpreter itself rather than by reading .pth files, which
    may run code (``import`` lines). Empty if it cannot be asked."""
    try:
        proc = subprocess.run(
            [executable, "-I", "-c", "import json, sys; print(json.dumps(sys.path))"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        entries = json.loads(proc.stdout)
    except (OSError, ValueError, subprocess.SubprocessError):
        return ()
    return tuple(e for e in entries if isinstance(e, str) and os.path.isdir(e))


def inside(path: str | os.PathLike, roots: list[Path]) -> bool:
    real = Path(os.path.realpath(path))
    return any(real == r or r in real.parents for r in roots)


def _ld_so_conf(path: str = "/etc/ld.so.conf", depth: int = 0) -> list[str]:
    dirs: list[str] = []
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return dirs
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("include ") and depth < 8:
            pattern = line.split(None, 1)[1]
            if not os.path.isabs(pattern):
                pattern = os.path.join(os.path.dirname(path), pattern)
            for included in sorted(glob.glob(pattern)):
                dirs += _ld_so_conf(included, depth + 1)
        elif os.path.isabs(line):
            dirs.append(line)
    return dirs


def system_dirs() -> list[str]:
    """The system's standard library directories: ld.so.conf's, then the loader's defaults."""
    return list(dict.fromkeys([*_ld_so_conf(), *DEFAULT_DIRS]))


def expand(entry: str, origin: Path) -> str | None:
    """An RPATH/RUNPATH entry with $ORIGIN, $LIB and $PLATFORM expanded; None for an entry the
    loader takes relative to the current directory (empty or relative)."""
    lib = "lib64" if sys.maxsize > 2**32 else "lib"
    value = entry
    for token, replacement in (("ORIGIN", str(origin)), ("LIB", lib), ("PLATFORM", platform.machine())):
        value = value.replace("${" + token + "}", replacement).replace("$" + token, replacement)
    if not value or not os.path.isabs(value):
        return None
    return os.path.normpath(value)


def _compatible(candidate: str, info: LibraryInfo) -> bool:
    try:
        with open(candidate, "rb") as f:
            elf = ELFFile(f)
            return elf.elfclass == info.elf_class and elf["e_machine"] == info.machine
    except (ELFError, OSError, ValueError):
        return False


@dataclasses.dataclass(frozen=True)
class Resolution:
    name: str
    path: str | None  # None: not found
    via: str  # "path", "RPATH", "RUNPATH", "system"


def resolve_needed(info: LibraryInfo, loaded: Mapping[str, str] | None = None) -> list[Resolution]:
    """Where the loader finds each NEEDED library of ``info`` (LD_LIBRARY_PATH ignored). ``loaded``: the
    libraries already in the process (SONAME or file name -> path, see ``loaded_closure``); a NEEDED
    name that the search path does not find but one of them answers to resolves to it, via "loaded"."""
    origin = info.path.resolve().parent
    searches: list[tuple[str, list[str]]] = []
    if info.rpath and not info.runpath:
        searches.append(("RPATH", [d for e in info.rpath if (d := expand(e, origin))]))
    if info.runpath:
        searches.append(("RUNPATH", [d for e in info.runpath if (d := expand(e, origin))]))
    searches.append(("system", system_dirs()))
    out = []
    for name in info.needed:
        if "/" in name:
            path = name if os.path.isabs(name) else None
            out.append(Resolution(name, path if path and _compatible(path, info) else None, "path"))
            continue
        found = None
        for via, dirs in searches:
            for d in dirs:
                candidate = os.path.join(d, name)
                if os.path.exists(candidate) and _compatible(candidate, info):
                    found = Resolution(name, candidate, via)
                    break
            if found:
                break
        if found is None and loaded and name in loaded:
            found = Resolution(name, loaded[name], "loaded")
        out.append(found or Resolution(name, None, "none"))
    return out


def loaded_closure(
    libraries: Iterable[str | os.PathLike], loaded: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The libraries in a process after ``libraries`` are loaded, one after the other, into a process
    holding ``loaded``: each of them and everything its NEEDED entries bring in, by SONAME and by file
    name -> path. Unreadable or unresolvable libraries are left out (PKG-6 reports those)."""
    found = dict(loaded or {})
    pending = [str(p) for p in libraries]
    seen: set[str] = set()
    while pending:
        path = os.path.realpath(pending.pop(0))
        if path in seen:
            continue
        seen.add(path)
        try:
            info = read_library(path)
        except UnreadableLibrary:
            continue
        for name in filter(None, (info.soname, os.path.basename(path))):
            found.setdefault(name, path)
        pending += [r.path for r in resolve_needed(info, found) if r.path]
    return found


def executorch_runtime_libraries() -> list[str]:
    """ExecuTorch's Python runtime extension (``executorch/extension/pybindings/_C*.so``), which is
    loaded before any backend's runtime library when ``executorch.runtime`` is imported; [] where
    executorch is not installed."""
    try:
        spec = importlib.util.find_spec("executorch")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return sorted(
        p
        for root in spec.submodule_search_locations
        for p in glob.glob(os.path.join(root, "extension", "pybindings", "_C*.so"))
    )
