"""abi_checks/loader.py follows the loader's rules, on libraries built here with gcc and checked
against what glibc's ld.so really does with them (loaded with ctypes in a fresh process)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from abi_checks.elf import DynSymbol
from abi_checks.loader import Package, load

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc builds the test libraries")


def gcc(out: Path, source: str, *flags: str) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.with_suffix(".c")
    src.write_text(source)
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-o", str(out), str(src), *flags], check=True, capture_output=True
    )
    return out


def loads(path: Path) -> bool:
    """Whether the real loader opens ``path`` (RTLD_NOW, as Python does)."""
    code = "import ctypes, sys\ntry:\n ctypes.CDLL(sys.argv[1])\nexcept OSError:\n sys.exit(1)\n"
    return (
        subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, timeout=300).returncode
        == 0
    )


def chain(tmp_path: Path, dtags: str) -> Path:
    """top (RUNPATH or RPATH $ORIGIN/sub) NEEDs mid in sub/, which NEEDs leaf in sub/ and has no path of its own."""
    sub = tmp_path / "sub"
    gcc(sub / "libleaf.so", "int leaf(void){return 3;}\n")
    gcc(sub / "libmid.so", "int leaf(void);\nint mid(void){return leaf();}\n", f"-L{sub}", "-lleaf")
    return gcc(
        tmp_path / "libtop.so",
        "int mid(void);\nint top(void){return mid();}\n",
        f"-L{sub}",
        "-lmid",
        f"-Wl,{dtags},-rpath,$ORIGIN/sub",
    )


@needs_gcc
def test_runpath_is_not_used_for_dependencies_of_dependencies(tmp_path):
    top = chain(tmp_path, "--enable-new-dtags")
    package = Package.around(top, None)
    scope = load(package.subject(), package, [])
    found = {e.name: e.found for e in scope.edges}
    assert found["libmid.so"] is not None and found["libleaf.so"] is None
    assert not loads(top)  # glibc agrees: libleaf.so is not found


@needs_gcc
def test_rpath_is_used_for_dependencies_of_dependencies(tmp_path):
    top = chain(tmp_path, "--disable-new-dtags")
    package = Package.around(top, None)
    scope = load(package.subject(), package, [])
    edges = {e.name: e for e in scope.edges}
    assert edges["libleaf.so"].found is not None
    assert edges["libleaf.so"].via == "RPATH $ORIGIN/sub of libtop.so"
    assert [o.path for o in scope.order] == ["libtop.so", "sub/libmid.so", "sub/libleaf.so"]
    assert loads(top)


@needs_gcc
def test_scope_is_breadth_first_and_hidden_symbols_do_not_bind(tmp_path):
    """Two dependencies define f; the first in NEEDED order wins. A hidden g binds nowhere."""
    gcc(
        tmp_path / "liba.so",
        'int f(void){return 1;}\n__attribute__((visibility("hidden"))) int g(void){return 1;}\n',
    )
    gcc(tmp_path / "libb.so", "int f(void){return 2;}\n")
    top = gcc(
        tmp_path / "libtop.so",
        "int f(void);\nint g(void);\nint top(void){return f()+g();}\n",
        f"-L{tmp_path}",
        "-la",
        "-lb",
        "-Wl,--unresolved-symbols=ignore-all,--enable-new-dtags,-rpath,$ORIGIN",
    )
    package = Package.around(top, None)
    scope = load(package.subject(), package, [])
    f = DynSymbol("f", None, False, "GLOBAL", "FUNC", "STV_DEFAULT")
    g = DynSymbol("g", None, False, "GLOBAL", "FUNC", "STV_DEFAULT")
    provider = scope.provider(f)
    assert provider is not None and provider.path == "liba.so"
    assert scope.provider(g) is None
    assert not loads(top)  # g is undefined at load (RTLD_NOW)


@needs_gcc
def test_versions_bind_as_the_loader_binds_them(tmp_path):
    """f@@V2 (default) and f@V1 (hidden): a V1 or V2 reference binds, V3 does not; an
    unversioned reference binds to the default, and only-hidden h@V1 takes no unversioned one."""
    script = tmp_path / "v.map"
    script.write_text("V1 { global: h; f; local: *; };\nV2 { global: f; } V1;\n")
    lib = gcc(
        tmp_path / "libv.so",
        "int f_old(void){return 1;}\nint f_new(void){return 2;}\nint h_old(void){return 3;}\n"
        '__asm__(".symver f_old,f@V1");\n__asm__(".symver f_new,f@@V2");\n__asm__(".symver h_old,h@V1");\n',
        f"-Wl,--version-script={script}",
    )
    package = Package.around(lib, None)
    obj = package.subject()

    def sym(name: str, version: str | None) -> DynSymbol:
        return DynSymbol(name, version, False, "GLOBAL", "FUNC", "STV_DEFAULT")

    assert obj.defines(sym("f", "V1")) and obj.defines(sym("f", "V2"))
    assert not obj.defines(sym("f", "V3"))
    assert obj.defines(sym("f", None))
    assert obj.defines(sym("h", "V1")) and not obj.defines(sym("h", None))


@needs_gcc
def test_an_already_loaded_soname_wins_over_the_search_path(tmp_path):
    """With executorch 1.5.1's libexecutorch.so loaded at import, a NEEDED libexecutorch.so binds
    to it although the library's RUNPATH names a folder where no such file is."""
    import sysconfig

    from abi_checks.diff import load_baseline
    from abi_checks.release_libraries import release_libraries

    et_lib = Path(sysconfig.get_paths()["purelib"]) / "executorch/lib"
    lib = gcc(
        tmp_path / "libuser.so",
        "int f(void){return 1;}\n",
        f"-L{et_lib}",
        "-Wl,--no-as-needed",
        "-lexecutorch",
        "-Wl,--enable-new-dtags,-rpath,$ORIGIN/nowhere",
    )
    package = Package.around(lib, release_libraries(load_baseline("1.5.1")))
    scope = load(package.subject(), package, package.preloaded())
    edge = next(e for e in scope.edges if e.name == "libexecutorch.so")
    assert edge.via == "already loaded" and edge.found is not None
    assert edge.found.path == "executorch/lib/libexecutorch.so" and edge.found.where == "release"
