"""A vendor wheel read before anything is installed: its files laid out as site-packages would
hold them, its metadata, and where each shared library's RUNPATH and NEEDED entries lead.

``unpack`` extracts ``VENDOR.whl`` into a folder that stands for site-packages (the
``<name>.data/purelib`` and ``platlib`` trees are moved there, as an installer does), refusing
entries that would land outside it. ``path_problems`` judges one library's RUNPATH/RPATH and
NEEDED entries inside that layout with the loader's rules (abi_checks/loader.py).
"""

from __future__ import annotations

import dataclasses
import email.parser
import os
import shutil
import zipfile
from pathlib import Path, PurePosixPath

from abi_checks.elf import ELF_MAGIC
from abi_checks.loader import OUTSIDE, PACKAGE, RELEASE, SYSTEM, Edge, Package, load
from abi_checks.release_libraries import ReleaseLibraries

#: The libraries every manylinux policy lets a wheel need from the system (auditwheel's
#: policy lists; glibc and the GCC runtime).
SYSTEM_LIBRARIES = frozenset(
    {
        "libc.so.6",
        "libm.so.6",
        "libdl.so.2",
        "librt.so.1",
        "libpthread.so.0",
        "libgcc_s.so.1",
        "libstdc++.so.6",
        "ld-linux-x86-64.so.2",
        "ld-linux-aarch64.so.1",
        "libutil.so.1",
        "libresolv.so.2",
        "libnsl.so.1",
        "libcrypt.so.1",
        "libz.so.1",
        "libexpat.so.1",
    }
)


class BadWheel(ValueError):
    """Not a wheel this tool can read."""


@dataclasses.dataclass
class Wheel:
    path: Path
    root: Path  # stands for site-packages
    name: str
    version: str
    requires: list[str]  # Requires-Dist lines
    platform_tags: list[str]
    libraries: list[Path]  # ELF shared objects in it


def check_input_file(path: Path) -> None:
    """A regular, readable file (not a directory, FIFO or device): the CLI's shared input-file check
    (conformance/input_files.py), as BadWheel."""
    from conformance.input_files import NotARegularFile, check_input_file

    try:
        check_input_file(path, give="the .whl file (pip wheel . -w dist)")
    except FileNotFoundError:
        raise BadWheel(f"{path}: no such file") from None
    except NotARegularFile as exc:
        raise BadWheel(str(exc)) from None
    except OSError as exc:
        raise BadWheel(f"{path}: cannot be read ({exc.strerror})") from None


def unpack(path: Path, dest: Path) -> Wheel:
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    check_input_file(path)
    try:
        name, version, _, tags = parse_wheel_filename(path.name)
    except InvalidWheelFilename as exc:
        raise BadWheel(
            f"{path.name} is not a wheel file name ({exc}); a wheel is NAME-VERSION-TAGS.whl"
        ) from None
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise BadWheel(f"{path} is not a readable wheel (zip) file ({exc})") from None
    root = dest / "site-packages"
    root.mkdir(parents=True, exist_ok=True)
    with archive:
        for info in archive.infolist():
            parts = PurePosixPath(info.filename).parts
            if info.filename.startswith("/") or ".." in parts or (parts and ":" in parts[0]):
                raise BadWheel(
                    f"{path.name} holds {info.filename!r}, which would be written outside site-packages"
                )
            if info.is_dir():
                continue
            target = root.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
    dist_info = sorted(root.glob("*.dist-info"))
    metadata = dist_info[0] / "METADATA" if dist_info else None
    if metadata is None or not metadata.is_file():
        raise BadWheel(f"{path.name} has no *.dist-info/METADATA: it is not a wheel an installer accepts")
    for data in root.glob("*.data"):
        for scheme in ("purelib", "platlib"):
            tree = data / scheme
            if tree.is_dir():
                shutil.copytree(tree, root, dirs_exist_ok=True)
                shutil.rmtree(tree)
    meta = email.parser.Parser().parsestr(metadata.read_text(encoding="utf-8", errors="replace"))
    libraries = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and _is_elf(p))
    return Wheel(
        path,
        root,
        str(name),
        str(version),
        meta.get_all("Requires-Dist") or [],
        sorted({t.platform for t in tags}),
        libraries,
    )


def _is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(4) == ELF_MAGIC
    except OSError:
        return False


def own_executorch_files(wheel: Wheel) -> list[str]:
    """Files the wheel would write into the executorch distribution's folder."""
    folder = wheel.root / "executorch"
    return (
        sorted(p.relative_to(wheel.root).as_posix() for p in folder.rglob("*") if p.is_file())
        if folder.is_dir()
        else []
    )


@dataclasses.dataclass
class PathFinding:
    severity: str  # "error", "warning", "ok"
    text: str
    from_other_distribution: str = ""  # a NEEDED name another distribution is expected to provide


def _entry_target(entry: str, lib: Path, root: Path) -> tuple[str, Path | None]:
    """(kind, where) of one RUNPATH entry of ``lib``: kind absolute / relative / origin."""
    if "$ORIGIN" in entry or "${ORIGIN}" in entry:
        expanded = entry.replace("${ORIGIN}", str(lib.parent)).replace("$ORIGIN", str(lib.parent))
        return "origin", Path(os.path.normpath(expanded))
    if entry.startswith("/"):
        return "absolute", Path(entry)
    return "relative", None


def _needed_edges(wheel: Wheel, lib: Path, release: ReleaseLibraries, opened: Path) -> list[Edge]:
    """How the loader resolves ``lib``'s NEEDED entries when ``opened`` is dlopen()ed."""
    package = Package.on_disk(wheel.root, opened, release)
    scope = load(package.subject(), package, package.preloaded())
    target = lib.resolve()
    return [e for e in scope.edges if e.requester.real_path == target]


def loaders(wheel: Wheel, release: ReleaseLibraries) -> dict[Path, Path]:
    """library -> the library of the wheel that loads it (NEEDs it, directly or not), for the
    libraries no other one loads first; the others are opened themselves."""
    loaded_by: dict[Path, Path] = {}
    for lib in wheel.libraries:
        package = Package.on_disk(wheel.root, lib, release)
        for obj in load(package.subject(), package, package.preloaded()).order[1:]:
            if obj.where == PACKAGE and obj.real_path is not None and obj.real_path != lib.resolve():
                loaded_by.setdefault(obj.real_path, lib.resolve())
    # A library loaded by one that is itself loaded: attribute it to the outermost.
    for lib, first in list(loaded_by.items()):
        seen, outer = {lib}, first
        while outer in loaded_by and outer not in seen:
            seen.add(outer)
            outer = loaded_by[outer]
        loaded_by[lib] = outer
    return {lib: by for lib, by in loaded_by.items() if by != lib}


def path_problems(
    wheel: Wheel, lib: Path, release: ReleaseLibraries, loaded_by: Path | None = None
) -> list[PathFinding]:
    """RUNPATH/RPATH and NEEDED of ``lib`` once installed, with executorch ``release`` next to
    it; ``loaded_by``: the library of the wheel whose loading loads it."""
    package = Package.on_disk(wheel.root, lib, release)
    subject = package.subject()
    out: list[PathFinding] = []
    name = package.display(lib)
    for kind, entries in (("RUNPATH", subject.runpath), ("RPATH", subject.rpath)):
        for entry in entries:
            how, where = _entry_target(entry, lib, wheel.root)
            if how == "absolute":
                out.append(
                    PathFinding(
                        "error",
                        f"{kind} entry {entry} is an absolute path: on a user's machine it names a folder of "
                        f"the build machine, or nothing; use $ORIGIN-relative entries",
                    )
                )
            elif how == "relative":
                out.append(
                    PathFinding(
                        "error",
                        f"{kind} entry {entry!r} is relative to the current directory of whatever process loads it",
                    )
                )
            elif where is not None and not (where == wheel.root or wheel.root in where.parents):
                out.append(
                    PathFinding(
                        "error", f"{kind} entry {entry} leaves site-packages once installed (it is {where})"
                    )
                )
        if kind == "RPATH" and entries and not subject.runpath:
            out.append(
                PathFinding(
                    "warning",
                    "DT_RPATH, not DT_RUNPATH: it also applies to the libraries it loads and wins over "
                    "LD_LIBRARY_PATH (link with --enable-new-dtags)",
                )
            )
    alone = {e.name: e for e in _needed_edges(wheel, lib, release, lib)}
    within = {e.name: e for e in _needed_edges(wheel, lib, release, loaded_by)} if loaded_by else alone
    by = package.display(loaded_by) if loaded_by else ""
    for needed in subject.needed:
        edge = within.get(needed) or alone[needed]
        found = edge.found
        if loaded_by and edge.found is not None and alone[needed].found is None:
            out.append(
                PathFinding(
                    "warning",
                    f"NEEDED {needed}: found only because {by}, which loads it, has loaded it already; opened on "
                    f"its own it does not find it (no RUNPATH entry leads to it: add $ORIGIN)",
                )
            )
            continue
        others = [d for d in edge.searched if not d.startswith("/") and not _in_wheel(wheel, d)]
        if found is not None and found.where == PACKAGE:
            out.append(PathFinding("ok", f"NEEDED {needed}: {found.path} in the wheel ({edge.via})"))
        elif found is not None and found.where == RELEASE:
            out.append(
                PathFinding(
                    "ok", f"NEEDED {needed}: executorch {release.release}'s {found.path} ({edge.via})"
                )
            )
        elif needed in SYSTEM_LIBRARIES:
            out.append(PathFinding("ok", f"NEEDED {needed}: the system"))
        elif others:
            out.append(
                PathFinding(
                    "ok",
                    f"NEEDED {needed}: expected from another distribution, through {', '.join(others)} "
                    f"(the wheel must require it)",
                    needed,
                )
            )
        elif found is not None and found.where in (SYSTEM, OUTSIDE):
            out.append(
                PathFinding(
                    "warning",
                    f"NEEDED {needed}: found on this machine at {found.path}, which is not a library every "
                    f"manylinux system has; a user's machine may not",
                )
            )
        elif needed in release.names():
            continue  # an ExecuTorch library this release does not ship: the ABI rows say so
        else:
            out.append(
                PathFinding(
                    "error",
                    f"NEEDED {needed} is found neither in the wheel, nor in executorch {release.release}, nor "
                    f"through a RUNPATH into another distribution, nor among the system libraries a "
                    f"manylinux wheel may need ({name} would fail to load)",
                )
            )
    return out


def _in_wheel(wheel: Wheel, rel: str) -> bool:
    folder = wheel.root / rel
    return folder.is_dir() and any(folder.iterdir())
