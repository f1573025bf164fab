"""PKG-1, PKG-2 and the library and wheel checks PKG-5 to PKG-7, on real files: shared
libraries built here with gcc, wheels written and installed here, the suite run through
the CLI."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet

from conformance.checks.packaging import (
    audit_wheel,
    installed_wheel,
    needed_problems,
    private_imports,
    requirement_problem,
    runpath_problems,
    wheel_tag_problems,
)
from conformance.inspection.library_paths import environment_roots

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "conformance"))

from suite_runner import results_by_id, run_suite  # noqa: E402

BUILD_VENV_LIB = "/opt/build-venv-3f9a/lib/python3.11/site-packages/executorch/lib"
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build test libraries")


# --------------------------------------------------------------------------- PKG-1


@pytest.mark.parametrize(
    "spec", [">=1.5,<1.6", "~=1.5.0", "==1.5.1", "==1.5.*", ">=1.5.1,<1.6", ">=1.5,<1.5.9"]
)
def test_one_minor_release_is_accepted(spec):
    assert requirement_problem(SpecifierSet(spec), f"executorch{spec}") is None


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        (
            "~=1.5",
            "1.5 to 1.x (executorch 1.6 among them) (~=1.5 means >=1.5,<2; ~=1.5.0 means >=1.5.0,<1.6)",
        ),
        (">=1.5,<2", "1.5 to 1.x"),
        (">=1.4,<1.6", "1.4 to 1.5"),
        (">=1.5", "no upper bound"),
        ("<1.6", "no lower bound"),
        (">=1.6,<1.5", "admits no executorch release"),
    ],
)
def test_more_than_one_minor_is_refused_saying_which(spec, says):
    problem = requirement_problem(SpecifierSet(spec), f"executorch{spec}")
    assert problem is not None and says in problem, problem
    assert "executorch>=1.5,<1.6 or executorch~=1.5.0" in problem


@settings(max_examples=60, deadline=None)
@given(major=st.integers(0, 3), minor=st.integers(0, 39), patch=st.integers(0, 20))
def test_pinning_any_minor_passes_and_compatible_release_of_two_parts_does_not(major, minor, patch):
    assert requirement_problem(SpecifierSet(f">={major}.{minor}.{patch},<{major}.{minor + 1}"), "r") is None
    assert requirement_problem(SpecifierSet(f"~={major}.{minor}.{patch}"), "r") is None
    problem = requirement_problem(SpecifierSet(f"~={major}.{minor}"), "r")
    assert problem is not None and f"executorch {major}.{minor + 1} among them" in problem


# --------------------------------------------------------------------------- PKG-2


def test_a_single_module_and_dynamic_imports_are_scanned(tmp_path):
    module = tmp_path / "vendor_mod.py"
    module.write_text(
        "import importlib\n"
        "import importlib as il\n"
        "from importlib import import_module as im\n"
        "a = __import__('executorch.exir._serialize._program')\n"
        "b = importlib.import_module('executorch.exir._serialize')\n"
        "c = il.import_module('._serialize', 'executorch.exir')\n"
        "d = im('executorch._private_thing')\n"
        "e = importlib.import_module('executorch.exir.backend')\n"  # public
        "f = importlib.import_module(name_from_somewhere)\n"  # not a literal: not seen
    )
    found = private_imports(module)
    assert [line.split(": ", 1)[1] for line in found] == [
        "executorch.exir._serialize._program",
        "executorch.exir._serialize",
        "executorch.exir._serialize",
        "executorch._private_thing",
    ]
    assert found[0].startswith("vendor_mod.py:4: ")


def test_the_common_exir_ops_import_names_the_public_alternative(tmp_path):
    pkg = tmp_path / "vendorpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from executorch.exir.dialects._ops import ops as exir_ops\n"
        "from executorch.exir._serialize._named_data_store import NamedDataStoreOutput\n"
    )
    ops_line, store_line = private_imports(pkg)
    assert "vendorpkg/__init__.py:1: executorch.exir.dialects._ops.ops" in ops_line
    assert "node.target.name() is 'aten::add.Tensor'" in ops_line
    assert "from the public executorch.exir.backend.backend_details" in store_line


def test_the_advice_is_true_of_the_installed_executorch():
    from executorch.exir.backend.backend_details import NamedDataStoreOutput
    from executorch.exir.dialects._ops import ops

    assert ops.edge.aten.add.Tensor.name() == "aten::add.Tensor"
    assert NamedDataStoreOutput.__name__ == "NamedDataStoreOutput"


@pytest.mark.full
def test_a_single_module_vendor_is_scanned_by_the_suite(tmp_path):
    code, report, output = run_suite(
        tmp_path, "broken_backends.descriptors:SINGLE_MODULE_PRIVATE_IMPORT", "--checks", "PKG-2"
    )
    assert report is not None, output
    reason = results_by_id(report)["PKG-2"]["reason"]
    assert code == 1 and "single_module_vendor.py:5: executorch.exir._serialize._program" in reason, reason


def test_strings_that_reach_private_modules_are_followed(tmp_path):
    module = tmp_path / "strings_mod.py"
    module.write_text(
        "import sys\n"
        "import importlib.util\n"
        "from importlib import util as u\n"
        "from importlib.util import find_spec as fs\n"
        "from sys import modules as loaded\n"
        "import sys as s\n"
        "NAME = 'executorch.extension.pybindings._portable_lib'\n"
        "PKG = 'executorch.exir'\n"
        "SUB = PKG + '._serialize'\n"
        "a = sys.modules[NAME]\n"
        "b = sys.modules.get('executorch.exir._serialize._program')\n"
        "c = importlib.util.find_spec(SUB)\n"
        "d = u.find_spec('executorch._private')\n"
        "e = fs('executorch.exir._serialize')\n"
        "f = loaded['executorch.exir.dialects._ops']\n"
        "g = s.modules.pop('executorch.exir._serialize', None)\n"
        "h = __import__(NAME)\n"
        "i = importlib.util.find_spec('executorch.exir.backend')\n"  # public
        "j = sys.modules[PKG]\n"  # public
        "REBOUND = 'executorch._x'\n"
        "REBOUND = other\n"  # bound twice: not a constant
        "k = sys.modules[REBOUND]\n"
        "def lookup(n):\n"
        "    return sys.modules[n]\n"  # a parameter: not seen
    )
    found = [line.split(" (", 1)[0] for line in private_imports(module)]
    assert found == [
        "strings_mod.py:10: executorch.extension.pybindings._portable_lib",
        "strings_mod.py:11: executorch.exir._serialize._program",
        "strings_mod.py:12: executorch.exir._serialize",
        "strings_mod.py:13: executorch._private",
        "strings_mod.py:14: executorch.exir._serialize",
        "strings_mod.py:15: executorch.exir.dialects._ops",
        "strings_mod.py:16: executorch.exir._serialize",
        "strings_mod.py:17: executorch.extension.pybindings._portable_lib",
    ]
    assert "executorch.runtime" in private_imports(module)[0]  # the public way, named


@pytest.mark.full
def test_a_string_import_package_fails_pkg2_naming_each_place(tmp_path):
    code, report, output = run_suite(
        tmp_path, "broken_backends.descriptors:STRING_IMPORT", "--checks", "PKG-2"
    )
    assert report is not None, output
    reason = results_by_id(report)["PKG-2"]["reason"]
    assert code == 1, reason
    for place in (
        "string_import_vendor/__init__.py:16: executorch.extension.pybindings._portable_lib",
        "string_import_vendor/__init__.py:17: executorch.extension.pybindings._portable_lib",
        "string_import_vendor/__init__.py:21: executorch.exir._serialize._program",
        "string_import_vendor/__init__.py:25: executorch.extension.pybindings._portable_lib",
    ):
        assert place in reason, reason


# --------------------------------------------------------------------------- PKG-5, PKG-6


def _gcc(out: Path, source: str, *flags: str) -> Path:
    src = out.with_suffix(".c")
    src.write_text(source)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(src), *flags], check=True)
    return out


@needs_gcc
@pytest.mark.parametrize(
    ("dtags", "kind"), [("--enable-new-dtags", "RUNPATH"), ("--disable-new-dtags", "RPATH")]
)
def test_an_absolute_build_environment_path_is_caught(tmp_path, dtags, kind):
    lib = _gcc(tmp_path / "libvendor.so", "int f(void){return 1;}\n", f"-Wl,{dtags},-rpath,{BUILD_VENV_LIB}")
    (problem,) = runpath_problems(lib, environment_roots())
    assert str(lib) in problem and f"{kind} entry '{BUILD_VENV_LIB}' is an absolute path" in problem
    assert f"outside the installed environment {sys.prefix}" in problem


@needs_gcc
def test_origin_paths_that_escape_and_relative_entries_are_caught(tmp_path):
    lib = _gcc(
        tmp_path / "libvendor.so",
        "int f(void){return 1;}\n",
        "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../../../../../../../../usr/local/lib:relative/dir",
    )
    escape, relative = runpath_problems(lib, environment_roots())
    assert "escapes the environment: it is /usr/local/lib" in escape
    assert "'relative/dir' is relative to the current directory" in relative


def test_the_reference_backend_library_stays_inside():
    from reference_backend.runtime import library_path

    roots = environment_roots()
    assert runpath_problems(Path(library_path()), roots) == []
    assert needed_problems(Path(library_path()), roots) == []


@needs_gcc
def test_needed_libraries_found_nowhere_or_outside_are_caught(tmp_path):
    dep_dir = tmp_path / "build" / "deps"
    dep_dir.mkdir(parents=True)
    _gcc(dep_dir / "libvendordep.so", "int dep(void){return 2;}\n")
    source = "int dep(void);\nint f(void){return dep();}\n"
    nowhere = _gcc(tmp_path / "libnowhere.so", source, f"-L{dep_dir}", "-lvendordep")
    (problem,) = needed_problems(nowhere, environment_roots())
    assert f"{nowhere}: NEEDED libvendordep.so is found neither" in problem
    outside = _gcc(
        tmp_path / "liboutside.so",
        source,
        f"-L{dep_dir}",
        "-lvendordep",
        f"-Wl,--enable-new-dtags,-rpath,{dep_dir}",
    )
    (problem,) = needed_problems(outside, environment_roots())
    assert f"NEEDED libvendordep.so resolves to {dep_dir / 'libvendordep.so'} (through RUNPATH)" in problem


@needs_gcc
def test_the_suite_fails_a_runtime_library_with_a_build_environment_runpath(tmp_path):
    lib = _gcc(
        tmp_path / "libvendor_runtime.so",
        "int f(void){return 1;}\n",
        f"-Wl,--enable-new-dtags,-rpath,{BUILD_VENV_LIB}",
    )
    code, report, output = run_suite(
        tmp_path / "r",
        "broken_backends.descriptors:FOREIGN_RUNPATH",
        "--checks",
        "PKG-5,PKG-6",
        env={"FOREIGN_RUNPATH_LIBRARY": str(lib)},
    )
    assert report is not None, output
    results = results_by_id(report)
    assert results["PKG-5"]["outcome"] == "failed" and code == 1
    assert str(lib) in results["PKG-5"]["reason"] and BUILD_VENV_LIB in results["PKG-5"]["reason"]
    assert "docs/out-of-tree-guide.md, step 6" in results["PKG-5"]["reason"]


# --------------------------------------------------------------------------- PKG-7


def _wheel(out_dir: Path, platform_tag: str, library: Path) -> Path:
    name, version = "tinyvendor", "1.0.0"
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": b"",
        f"{name}/lib/{library.name}": library.read_bytes(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: py3-none-{platform_tag}\n"
        ).encode(),
    }
    record = []
    path = out_dir / f"{name}-{version}-py3-none-{platform_tag}.whl"
    with zipfile.ZipFile(path, "w") as z:
        for arcname, data in files.items():
            z.writestr(arcname, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{arcname},sha256={digest},{len(data)}")
        z.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return path


@pytest.fixture(scope="module")
def getrandom_library(tmp_path_factory) -> Path:
    """A library that needs glibc 2.25 (getrandom), and nothing outside the manylinux policy."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build test libraries")
    out = tmp_path_factory.mktemp("lib") / "libtiny.so"
    return _gcc(out, "#include <sys/random.h>\nint f(void){char b[4]; return (int)getrandom(b, 4, 0);}\n")


def test_a_manylinux_tag_older_than_the_symbols_need_is_caught(tmp_path, getrandom_library):
    wheel = _wheel(tmp_path, "manylinux_2_17_x86_64", getrandom_library)
    problems, _ = wheel_tag_problems(wheel, audit_wheel(wheel), set())
    (problem,) = problems
    assert (
        "is tagged manylinux_2_17_x86_64, but auditwheel finds its symbol versions need manylinux_2_"
        in problem
    )


@pytest.mark.parametrize("tag", ["manylinux_2_28_x86_64", "linux_x86_64"])
def test_an_honest_tag_passes(tmp_path, getrandom_library, tag):
    wheel = _wheel(tmp_path, tag, getrandom_library)
    problems, summary = wheel_tag_problems(wheel, audit_wheel(wheel), set())
    assert problems == [] and "symbol versions need manylinux_2_" in summary


@needs_gcc
def test_an_external_library_breaks_a_manylinux_tag_unless_a_dependency_provides_it(tmp_path):
    dep_dir = tmp_path / "deps"
    dep_dir.mkdir()
    _gcc(dep_dir / "libexecutorch_like.so", "int dep(void){return 2;}\n")
    lib = _gcc(
        tmp_path / "libv.so",
        "int dep(void);\nint f(void){return dep();}\n",
        f"-L{dep_dir}",
        "-lexecutorch_like",
    )
    wheel = _wheel(tmp_path, "manylinux_2_17_x86_64", lib)
    audit = audit_wheel(wheel)
    (problem,) = wheel_tag_problems(wheel, audit, set())[0]
    assert "it needs libexecutorch_like.so" in problem
    problems, summary = wheel_tag_problems(wheel, audit, {"libexecutorch_like.so"})
    assert problems == [] and "libexecutorch_like.so come from other distributions" in summary


def test_the_installed_wheel_is_found_through_direct_url(tmp_path, getrandom_library):
    wheel = _wheel(tmp_path, "linux_x86_64", getrandom_library)
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    (dist,) = importlib.metadata.distributions(path=[str(target)])
    assert installed_wheel(dist) == wheel
    os.remove(wheel)
    assert installed_wheel(dist) is None  # the file is gone: PKG-7 is not applicable
