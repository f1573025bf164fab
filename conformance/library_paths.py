"""Where a shared library's dependencies come from: its RPATH/RUNPATH entries and
the resolution of its NEEDED libraries, judged against the installed Python
environment (PKG-5, PKG-6).

Resolution follows the dynamic loader (ld.so(8)) for one library: a NEEDED
name with a slash is a path; otherwise DT_RPATH (only when there is no
DT_RUNPATH), then DT_RUNPATH, then the system's directories (/etc/ld.so.conf
and the default ones). LD_LIBRARY_PATH is deliberately ignored: a user's
machine does not have the vendor's. A candidate must be an ELF file of the
same class and machine, as the loader requires.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import os
import platform
import site
import sys
import sysconfig
from pathlib import Path
from typing import Any

from elftools.common.exceptions import ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

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
            return LibraryInfo(p, elf.elfclass, elf["e_machine"], tuple(needed), tuple(rpath), tuple(runpath))
    except (ELFError, ValueError, OSError, KeyError) as exc:
        raise UnreadableLibrary(f"{p}: not a readable ELF library ({exc})") from None


def environment_roots() -> list[Path]:
    """The installed environment: sys.prefix and the site and scheme directories, resolved."""
    roots = {sys.prefix, *site.getsitepackages()}
    with contextlib.suppress(AttributeError):  # some embedded interpreters have no user site
        roots.add(site.getusersitepackages())
    for key in ("purelib", "platlib", "data"):
        roots.add(sysconfig.get_paths().get(key) or sys.prefix)
    return sorted({Path(os.path.realpath(r)) for r in roots if r}, key=str)


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


def resolve_needed(info: LibraryInfo) -> list[Resolution]:
    """Where the loader finds each NEEDED library of ``info`` (LD_LIBRARY_PATH ignored)."""
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
        out.append(found or Resolution(name, None, "none"))
    return out
