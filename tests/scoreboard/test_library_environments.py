"""PKG-5 and PKG-6 in the environments real backends are installed in: an environment layered on a base
one with ``site.addsitedir`` in a .pth, a library whose NEEDED entry resolves only through a library
loaded before it (load order), and an engine library the runtime library opens itself (C-PKG-5, C-PKG-6).

Everything is real: venvs made with ``python -m venv``, libraries built with gcc, the suite run by the
layered environment's own interpreter, and the dynamic loader asked (ctypes) whether it agrees.
"""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# The full tier (CI; bash scripts/test.sh --full): builds layered environments and libraries.
pytestmark = [
    pytest.mark.full,
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build test libraries"),
]

BASE_SITE = Path(site.getsitepackages()[0])  # this venv: torch, executorch and the suite
REPO = Path(__file__).resolve().parents[2]


def _gcc(out: Path, source: str, *flags: str) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.with_suffix(".c")
    src.write_text(source)
    # --no-as-needed: each -l becomes a NEEDED entry even where the source calls nothing of it
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-o", str(out), str(src), "-Wl,--no-as-needed", *flags], check=True
    )
    return out


@pytest.fixture(scope="module")
def layered(tmp_path_factory) -> Path:
    """A venv whose only packages come from this one, through ``import site; site.addsitedir(...)`` in a .pth:
    its interpreter imports torch, executorch and the suite from the base environment."""
    root = tmp_path_factory.mktemp("layered") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=300)
    (thin,) = (root / "lib").glob("python3.*/site-packages")
    (thin / "base.pth").write_text(f"import site; site.addsitedir({str(BASE_SITE)!r})\n")
    return root


def _site(venv: Path) -> Path:
    (thin,) = (venv / "lib").glob("python3.*/site-packages")
    return thin


def _vendor(venv: Path, name: str, libraries: list[Path], engines: list[Path] = ()) -> str:
    """A descriptor module in the layered venv: the reference descriptor with these libraries."""
    module = _site(venv) / f"{name}.py"
    module.write_text(
        textwrap.dedent(
            f"""
            import dataclasses
            from pathlib import Path
            from reference_backend.conformance import DESCRIPTOR as REFERENCE

            DESCRIPTOR = dataclasses.replace(
                REFERENCE,
                runtime_libraries=lambda: [Path(p) for p in {[str(p) for p in libraries]!r}],
                engine_libraries=lambda: [Path(p) for p in {[str(p) for p in engines]!r}],
            )
            """
        )
    )
    return f"{name}:DESCRIPTOR"


def _suite(venv: Path, tmp_path: Path, backend: str) -> dict[str, dict]:
    out = tmp_path / "report"
    proc = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "conformance.cli",
            "run",
            "--backend",
            backend,
            "--checks",
            "PKG-5,PKG-6",
        ]
        + ["--report-dir", str(out), "-n", "1"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert (out / "report.json").is_file(), proc.stdout + proc.stderr
    return {r["id"]: r for r in json.loads((out / "report.json").read_text())["results"]}


def _loads(python: Path, *libraries: Path) -> subprocess.CompletedProcess:
    """Loads ``libraries`` in order with ctypes in a fresh process: what the loader itself says."""
    code = "import ctypes, sys\nfor p in sys.argv[1:]: ctypes.CDLL(p, mode=ctypes.RTLD_GLOBAL)\n"
    return subprocess.run([str(python), "-c", code, *map(str, libraries)], capture_output=True, text=True)


def test_the_base_environment_of_a_layered_venv_is_inside(layered, tmp_path):
    """A library in the layered venv whose RUNPATH is the base environment's executorch/lib: inside the
    environment the interpreter runs in (PKG-5), and libexecutorch.so resolves there (PKG-6)."""
    et_lib = BASE_SITE / "executorch" / "lib"
    lib = _gcc(
        _site(layered) / "layered_vendor_lib" / "libvendor.so",
        "int f(void){return 1;}\n",
        f"-L{et_lib}",
        "-lexecutorch",
        f"-Wl,--enable-new-dtags,-rpath,{et_lib}",
    )
    results = _suite(layered, tmp_path, _vendor(layered, "layered_vendor", [lib]))
    assert results["PKG-5"]["outcome"] == "passed", results["PKG-5"]
    assert results["PKG-6"]["outcome"] == "passed", results["PKG-6"]
    from conformance.inspection.library_paths import read_library

    assert "libexecutorch.so" in read_library(lib).needed


def test_a_runpath_into_a_directory_no_pth_adds_is_still_outside(layered, tmp_path):
    """The broken variant: the same library pointing at a directory of the base interpreter's that no
    .pth of the layered venv adds (a build tree beside it)."""
    build = tmp_path / "build-tree" / "lib"
    _gcc(build / "libdep.so", "int dep(void){return 2;}\n")
    lib = _gcc(
        _site(layered) / "layered_outside_lib" / "libvendor.so",
        "int f(void){return 1;}\n",
        f"-L{build}",
        "-ldep",
        f"-Wl,--enable-new-dtags,-rpath,{build}",
    )
    results = _suite(layered, tmp_path, _vendor(layered, "layered_outside", [lib]))
    assert results["PKG-5"]["outcome"] == "failed"
    assert (
        f"RUNPATH entry '{build}' is an absolute path {build}, outside the installed environment"
        in (results["PKG-5"]["reason"])
    )
    assert results["PKG-6"]["outcome"] == "failed"
    assert "NEEDED libdep.so resolves to" in results["PKG-6"]["reason"]


@pytest.fixture(scope="module")
def load_order(layered) -> dict[str, Path]:
    """libfirst.so finds libbase.so through its RUNPATH; libsecond.so needs libbase.so and has no RUNPATH."""
    where = _site(layered) / "load_order_vendor"
    base = _gcc(where / "base" / "libbase.so", "int base(void){return 3;}\n", "-Wl,-soname,libbase.so")
    first = _gcc(
        where / "libfirst.so",
        "int base(void);\nint first(void){return base();}\n",
        f"-L{base.parent}",
        "-lbase",
        "-Wl,--enable-new-dtags,-rpath,$ORIGIN/base",
    )
    second = _gcc(
        where / "libsecond.so",
        "int base(void);\nint second(void){return base();}\n",
        f"-L{base.parent}",
        "-lbase",
    )
    return {"first": first, "second": second}


def test_the_loader_agrees_that_only_the_order_makes_it_load(layered, load_order):
    python = layered / "bin" / "python"
    assert _loads(python, load_order["first"], load_order["second"]).returncode == 0
    alone = _loads(python, load_order["second"])
    assert alone.returncode != 0 and "libbase.so: cannot open shared object file" in alone.stderr


def test_a_needed_library_loaded_before_resolves_through_load_order(layered, load_order, tmp_path):
    backend = _vendor(layered, "load_order_ok", [load_order["first"], load_order["second"]])
    results = _suite(layered, tmp_path, backend)
    assert results["PKG-6"]["outcome"] == "passed", results["PKG-6"]
    assert "libsecond.so: NEEDED libbase.so resolves only through load order" in results["PKG-6"]["reason"]


def test_the_same_libraries_in_the_other_order_fail_pkg6(layered, load_order, tmp_path):
    backend = _vendor(layered, "load_order_reversed", [load_order["second"], load_order["first"]])
    results = _suite(layered, tmp_path, backend)
    assert results["PKG-6"]["outcome"] == "failed"
    assert (
        "libsecond.so: NEEDED libbase.so is found neither through its RPATH/RUNPATH"
        in results["PKG-6"]["reason"]
    )


def test_an_engine_library_is_checked_and_a_dlopen_without_one_is_noted(layered, tmp_path):
    """The runtime library dlopens its engine: PKG-5/6 check the engine library the descriptor names (here
    with a RUNPATH into a build tree: a failure); without engine_libraries they note the dlopen."""
    where = _site(layered) / "engine_vendor"
    opener = _gcc(
        where / "libopener.so",
        '#include <dlfcn.h>\nvoid* open_engine(void){return dlopen("libengine.so", RTLD_NOW);}\n',
        "-ldl",
    )
    engine = _gcc(
        where / "libengine.so",
        "int engine(void){return 4;}\n",
        "-Wl,--enable-new-dtags,-rpath,/opt/engine-build/lib",
    )
    results = _suite(layered, tmp_path, _vendor(layered, "engine_bad", [opener], [engine]))
    assert results["PKG-5"]["outcome"] == "failed"
    assert (
        f"{engine}: RUNPATH entry '/opt/engine-build/lib' is an absolute path" in results["PKG-5"]["reason"]
    )
    results = _suite(layered, tmp_path, _vendor(layered, "engine_undeclared", [opener]))
    assert results["PKG-5"]["outcome"] == "passed", results["PKG-5"]
    assert (
        "libopener.so calls dlopen: the libraries it opens itself are not checked unless the descriptor "
        in (results["PKG-5"]["reason"])
    )
