"""Dynamic symbols of ELF shared libraries, demangled, and which of them belong to ExecuTorch.

Reads ``.dynsym`` and ``.dynamic`` with pyelftools; demangles with the C++ runtime's
``__cxa_demangle`` (through ctypes) and falls back to the ``c++filt`` program.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

ELF_MAGIC = b"\x7fELF"

# Itanium-mangled names of entities inside ExecuTorch's namespaces: optional special-name
# prefix (vtable, typeinfo, typeinfo name, guard variable, thunks, local-entity "Z"), then a
# nested name starting with one of the namespaces.
_SPECIAL = r"(?:T[VISTW]|TH|GV|GR|Th[n0-9]+_|Tv[n0-9]+_[n0-9]+_|Tc[^_]*_[^_]*_|Z)?"
_NAMESPACES = {
    "executorch": "10executorch",
    "torch::executor": "5torch8executor",
    "executorch_flatbuffer": "21executorch_flatbuffer",
}
_ET_MANGLED = re.compile(r"^_Z" + _SPECIAL + r"(?:N[rVKRO]*)?(?:" + "|".join(_NAMESPACES.values()) + r")")
# C-linkage entry points of ExecuTorch's platform abstraction layer.
_ET_C_PREFIXES = ("et_pal_",)


class NotAnElfFile(ValueError):
    """The path is not an ELF file."""


def is_executorch_symbol(mangled: str) -> bool:
    """True when the (mangled) symbol names an entity in an ExecuTorch namespace or the PAL."""
    return bool(_ET_MANGLED.match(mangled)) or mangled.startswith(_ET_C_PREFIXES)


def namespace_of(mangled: str) -> str:
    """Which ExecuTorch namespace a symbol is in ("et_pal" for the C platform layer)."""
    if mangled.startswith(_ET_C_PREFIXES):
        return "et_pal (C)"
    m = _ET_MANGLED.match(mangled)
    if not m:
        return "other"
    for ns, enc in _NAMESPACES.items():
        if m.group(0).endswith(enc):
            return ns
    return "other"


@dataclasses.dataclass(frozen=True)
class DynSymbol:
    name: str  # mangled, without a version suffix
    version: str | None
    defined: bool
    binding: str  # GLOBAL, WEAK, GNU_UNIQUE
    kind: str  # FUNC, OBJECT, TLS, IFUNC, NOTYPE
    visibility: str
    #: ``sym@VER`` (a non-default version, bit 15 of its .gnu.version entry): only a reference
    #: naming that version binds to it.
    version_hidden: bool = False


@dataclasses.dataclass
class DynamicInfo:
    path: Path
    soname: str | None
    needed: list[str]
    runpath: list[str]  # DT_RPATH and DT_RUNPATH entries together (what PKG checks print)
    symbols: list[DynSymbol]
    runpath_entries: list[str] = dataclasses.field(default_factory=list)  # DT_RUNPATH only
    rpath_entries: list[str] = dataclasses.field(default_factory=list)  # DT_RPATH only
    elf_class: int = 64
    machine: str = ""

    def exported(self) -> list[DynSymbol]:
        return [
            s
            for s in self.symbols
            if s.defined and s.binding != "LOCAL" and s.visibility in ("STV_DEFAULT", "STV_PROTECTED")
        ]

    def imported(self) -> list[DynSymbol]:
        return [s for s in self.symbols if not s.defined and s.name]


def check_elf(path: str | Path) -> Path:
    """``path`` if it is a regular ELF file; a FIFO or device is refused before it is opened (a
    read would block or never end), by the CLI's shared input-file check (conformance/input_files.py)."""
    from conformance.input_files import NotARegularFile, check_input_file

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file")
    try:
        check_input_file(p, give="a shared library (.so)")
    except NotARegularFile as exc:
        raise NotAnElfFile(str(exc)) from None
    with p.open("rb") as f:
        head = f.read(4)
    if head != ELF_MAGIC:
        raise NotAnElfFile(f"{p} is not an ELF file (first bytes {head!r}); give a shared library (.so)")
    return p


def read_dynamic(path: str | Path) -> DynamicInfo:
    """Dynamic section entries and dynamic symbols of an ELF file."""
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    p = check_elf(path)
    with p.open("rb") as f:
        elf = ELFFile(f)
        soname, needed, runpath, only_runpath, only_rpath = None, [], [], [], []
        for sec in elf.iter_sections():
            if isinstance(sec, DynamicSection):
                tag: Any  # pyelftools adds needed/soname/runpath/rpath to DynamicTag by tag kind
                for tag in sec.iter_tags():
                    if tag.entry.d_tag == "DT_NEEDED":
                        needed.append(tag.needed)
                    elif tag.entry.d_tag == "DT_SONAME":
                        soname = tag.soname
                    elif tag.entry.d_tag == "DT_RUNPATH":
                        runpath += tag.runpath.split(":")
                        only_runpath += tag.runpath.split(":")
                    elif tag.entry.d_tag == "DT_RPATH":
                        runpath += tag.rpath.split(":")
                        only_rpath += tag.rpath.split(":")
        dynsym = elf.get_section_by_name(".dynsym")
        versions, hidden = _symbol_versions(elf)
        symbols = []
        if isinstance(dynsym, SymbolTableSection):
            for i, sym in enumerate(dynsym.iter_symbols()):
                if i == 0 or not sym.name:
                    continue
                info = sym["st_info"]
                if info["type"] in ("STT_SECTION", "STT_FILE"):
                    continue
                symbols.append(
                    DynSymbol(
                        name=sym.name,
                        version=versions.get(i),
                        defined=sym["st_shndx"] != "SHN_UNDEF",
                        binding=info["bind"].replace("STB_", ""),
                        kind=info["type"].replace("STT_", "").replace("GNU_", ""),
                        visibility=sym["st_other"]["visibility"],
                        version_hidden=i in hidden,
                    )
                )
        elf_class, machine = elf.elfclass, elf["e_machine"]
    return DynamicInfo(
        p,
        soname,
        needed,
        [r for r in runpath if r],
        symbols,
        [r for r in only_runpath if r],
        [r for r in only_rpath if r],
        elf_class,
        machine,
    )


def _symbol_versions(elf) -> tuple[dict[int, str], set[int]]:
    """(dynsym index -> version name, indexes whose version is hidden)."""
    from elftools.elf.gnuversions import GNUVerSymSection

    out: dict[int, str] = {}
    hidden: set[int] = set()
    versym = next((s for s in elf.iter_sections() if isinstance(s, GNUVerSymSection)), None)
    if versym is None:
        return out, hidden
    names: dict[int, str] = {}
    for sec in elf.iter_sections():
        if sec["sh_type"] == "SHT_GNU_verneed":
            for _, auxs in sec.iter_versions():
                for aux in auxs:
                    names[aux["vna_other"]] = aux.name
        elif sec["sh_type"] == "SHT_GNU_verdef":
            for verdef, auxs in sec.iter_versions():
                aux = next(iter(auxs), None)
                if aux is not None:
                    names[verdef["vd_ndx"]] = aux.name
    for i, sym in enumerate(versym.iter_symbols()):
        ndx = sym["ndx"]
        if isinstance(ndx, int) and ndx > 1 and (ndx & 0x7FFF) in names:
            out[i] = names[ndx & 0x7FFF]
            if ndx & 0x8000:
                hidden.add(i)
    return out, hidden


def static_definitions(path: str | Path) -> list[str]:
    """Names of the functions and objects an ELF file defines in its full symbol table
    (``.symtab``), any binding or visibility: what a static link put inside it, hidden or not.
    Empty for a stripped file (then only ``.dynsym`` and the RTTI strings are left to read)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    p = check_elf(path)
    with p.open("rb") as f:
        elf = ELFFile(f)
        symtab = elf.get_section_by_name(".symtab")
        if not isinstance(symtab, SymbolTableSection):
            return []
        return sorted(
            {
                sym.name
                for sym in symtab.iter_symbols()
                if sym.name
                and sym["st_shndx"] != "SHN_UNDEF"
                and sym["st_info"]["type"] in ("STT_FUNC", "STT_OBJECT", "STT_GNU_IFUNC")
            }
        )


# ---------------------------------------------------------------- demangling

_cxa_demangle: Callable[[str], str] | Literal[False] | None = None  # False: none on this machine


def _load_demangler():
    global _cxa_demangle  # noqa: PLW0603  loaded once, on first use
    if _cxa_demangle is None:
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("stdc++") or "libstdc++.so.6")
            fn = lib.__cxa_demangle
            fn.restype = ctypes.c_void_p
            fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            libc.free.argtypes = [ctypes.c_void_p]

            def demangle_one(name: str) -> str:
                status = ctypes.c_int()
                ptr = fn(name.encode(), None, None, ctypes.byref(status))
                if not ptr or status.value != 0:
                    return name
                try:
                    return ctypes.string_at(ptr).decode("utf-8", "replace")
                finally:
                    libc.free(ptr)

            _cxa_demangle = demangle_one
        except (OSError, AttributeError):
            _cxa_demangle = False
    return _cxa_demangle


_SPECIAL_PREFIX_TEXT = {
    "_ZTV": "vtable for ",
    "_ZTI": "typeinfo for ",
    "_ZTS": "typeinfo name for ",
    "_ZTT": "VTT for ",
    "_ZGV": "guard variable for ",
}


def demangle_many(names: list[str]) -> dict[str, str]:
    """Mangled name -> demangled text (unchanged when it is not a C++ name)."""
    out: dict[str, str] = {}
    fn = _load_demangler()
    todo = [n for n in names if n.startswith("_Z")]
    for n in names:
        if not n.startswith("_Z"):
            out[n] = n
    if fn:
        for n in todo:
            out[n] = fn(n)
        return out
    tool = shutil.which("c++filt")
    if tool is None:
        return {**out, **{n: n for n in todo}}
    res = subprocess.run([tool], input="\n".join(todo), capture_output=True, text=True, check=True)
    for n, d in zip(todo, res.stdout.splitlines()):
        out[n] = d
    return out


def demangle(name: str) -> str:
    return demangle_many([name])[name]


_RTTI_NAME = re.compile(rb"N(?:10executorch|5torch8executor)[0-9A-Za-z_]*?E(?=\x00)")


def rtti_type_names(path: str | Path) -> list[str]:
    """Demangled ExecuTorch class names found as RTTI type-name strings in the file's data.

    A stripped library that derives from an ExecuTorch class still carries its base's
    typeinfo name (``N10executorch7runtime16BackendInterfaceE``) in .rodata.
    """
    data = Path(path).read_bytes()
    found = sorted({m.group(0).decode() for m in _RTTI_NAME.finditer(data)})
    names = demangle_many(["_ZTS" + f for f in found])
    return sorted(
        {
            names["_ZTS" + f].removeprefix("typeinfo name for ")
            for f in found
            if names["_ZTS" + f].startswith("typeinfo name for ")
        }
    )
