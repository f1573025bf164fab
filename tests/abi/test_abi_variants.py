"""abi check and check-wheel on variants of the reference backend built here from its sources
(tests/abi/variants): a registry of its own (a static link of the runtime's core), exported,
hidden and stripped; and a vendor-style wheel of two sibling libraries with an $ORIGIN
RUNPATH. Each verdict is also proven by loading the library into the real Python runtime."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conformance.cli import main

# The full tier (CI; bash scripts/test.sh --full): builds every ABI variant library with CMake
pytestmark = pytest.mark.full

VARIANTS = Path(__file__).resolve().parent / "variants"
needs_tools = pytest.mark.skipif(
    shutil.which("strip") is None or shutil.which("g++") is None, reason="g++ and strip build the variants"
)


def _tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else name


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


@pytest.fixture(scope="module")
def private(tmp_path_factory) -> dict[str, Path]:
    """The private-registry variants: exported, hidden (symbol table kept) and hidden+stripped."""
    import executorch

    import backend_kit

    build = tmp_path_factory.mktemp("private-registry")
    _run(
        [
            _tool("cmake"),
            "-S",
            str(VARIANTS),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}",
            "-DVARIANTS_PRIVATE_REGISTRY=ON",
            f"-DCMAKE_PREFIX_PATH={next(iter(executorch.__path__))}",
            f"-DBackendKit_DIR={backend_kit.cmake_dir()}",
            "-DCMAKE_BUILD_TYPE=Release",
        ]
    )
    _run([_tool("cmake"), "--build", str(build)])
    hidden = build / "private_registry_hidden" / "libprivate_registry_hidden.so"
    stripped_dir = build / "stripped"
    stripped_dir.mkdir()
    shutil.copy(hidden.parent / "build_info.json", stripped_dir)
    stripped = stripped_dir / "libprivate_registry_stripped.so"
    _run(["strip", "--strip-unneeded", "-o", str(stripped), str(hidden)])
    return {
        "exported": build / "private_registry" / "libprivate_registry.so",
        "hidden": hidden,
        "stripped": stripped,
    }


@pytest.fixture(scope="module")
def split_wheel(tmp_path_factory) -> Path:
    """The reference backend as a wheel of two sibling libraries, made by pip + scikit-build-core."""
    out = tmp_path_factory.mktemp("split-wheel")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(VARIANTS),
        ]
    )
    (wheel,) = out.glob("reference_backend_split_variant-*.whl")
    return wheel


def registered_after_loading(library: Path) -> list[str]:
    """Backend names executorch.runtime sees after ``library`` is loaded (RTLD_GLOBAL), in a fresh process."""
    code = (
        "import ctypes, json, sys\n"
        "from executorch.runtime import Runtime\n"
        "rt = Runtime.get()\n"
        "ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)\n"
        "print(json.dumps(sorted(rt.backend_registry.registered_backend_names)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(library)], capture_output=True, text=True, timeout=600, check=True
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def abi(capsys, *argv) -> tuple[int, dict]:
    code = main(["abi", "check", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def check_wheel(capsys, *argv) -> tuple[int, dict, str]:
    code = main(["check-wheel", *argv, "--json"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else {}), out.err


# --------------------------------------------------------------------------- a registry of its own


@needs_tools
@pytest.mark.parametrize(
    ("variant", "evidence"),
    [
        (
            "exported",
            "defines executorch::runtime::get_backend_class, executorch::runtime::register_backend (exported)",
        ),
        (
            "hidden",
            "defines executorch::runtime::get_backend_class, executorch::runtime::register_backend (hidden (static link))",
        ),
        (
            "stripped",
            "carries the RTTI of executorch::runtime::BackendInterface (it implements a backend) but imports neither register_backend",
        ),
    ],
)
def test_a_backend_with_its_own_registry_gets_that_verdict(private, capsys, variant, evidence):
    code, doc = abi(capsys, str(private[variant]), "--against", "1.5.0", "1.5.1")
    assert code == 4, doc
    for v in doc["verdicts"]:
        assert v["verdict"] == "carries its own registry", v
        assert v["reasons"][0].startswith(evidence), v["reasons"]
        assert "must rebuild" not in v["verdict"]
        assert f"not into executorch {v['release']}'s (executorch/lib/libexecutorch.so)" in v["meaning"]
        assert "error 0x20, NotFound" in v["meaning"]
        assert "nm -D --defined-only" in v["fix"]
    # Its other imports still bind to libexecutorch.so, which is why nothing else flags it.
    assert any("libexecutorch.so" in p for p in doc["verdicts"][-1]["providers"])


@needs_tools
def test_the_private_registry_verdict_is_what_the_runtime_does(private, split_wheel, tmp_path):
    """Loaded into the real runtime, a private-registry variant registers where nobody looks;
    the reference backend's own library and the split wheel's register for real."""
    from reference_backend.runtime import library_path

    for variant in ("exported", "hidden", "stripped"):
        names = registered_after_loading(private[variant])
        assert "ReferenceBackend" not in names and "XnnpackBackend" in names, (variant, names)
    assert "ReferenceBackend" in registered_after_loading(Path(library_path()))
    with zipfile.ZipFile(split_wheel) as z:
        z.extractall(tmp_path)
    assert "ReferenceBackend" in registered_after_loading(
        tmp_path / "reference_variant/lib/libreference_variant.so"
    )


@needs_tools
def test_the_text_report_says_what_it_means_and_what_to_do(private, capsys):
    code = main(["abi", "check", str(private["exported"]), "--against", "1.5.1"])
    out = capsys.readouterr().out
    assert code == 4
    assert "registry: carries its own registry: defines executorch::runtime::get_backend_class" in out
    assert "With executorch 1.5.1: libprivate_registry.so registers its backends into a private copy" in out
    assert "What to do: link executorch 1.5.1's shared runtime" in out


# --------------------------------------------------------------------------- sibling libraries


@needs_tools
def test_symbols_from_a_sibling_library_bind_there(split_wheel, tmp_path, capsys):
    with zipfile.ZipFile(split_wheel) as z:
        z.extractall(tmp_path)
    lib = tmp_path / "reference_variant/lib/libreference_variant.so"
    code, doc = abi(capsys, str(lib), "--built-against", "1.5.1", "--against", "1.5.1")
    (v,) = doc["verdicts"]
    assert code == 0 and v["verdict"] == "binary compatible", v
    assert doc["imports"] == {
        "_ZN10executorch9extension17reference_variant16core_descriptionEv": (
            "executorch::extension::reference_variant::core_description()"
        )
    }
    assert v["providers"] == {"reference_variant/lib/libreference_core.so (package)": 1}


@needs_tools
def test_a_sibling_that_is_not_shipped_names_what_is_missing(split_wheel, tmp_path, capsys):
    with zipfile.ZipFile(split_wheel) as z:
        z.extractall(tmp_path)
    (tmp_path / "reference_variant/lib/libreference_core.so").unlink()
    lib = tmp_path / "reference_variant/lib/libreference_variant.so"
    code, doc = abi(capsys, str(lib), "--built-against", "1.5.1", "--against", "1.5.1")
    (v,) = doc["verdicts"]
    assert code == 1 and v["verdict"] == "must rebuild"
    (reason,) = v["reasons"]
    assert reason.startswith(
        "missing symbol executorch::extension::reference_variant::core_description(): no library it loads exports it"
    )
    assert "not found: libreference_core.so" in reason


@needs_tools
def test_check_wheel_passes_the_split_wheel(split_wheel, capsys):
    code, doc, _ = check_wheel(capsys, str(split_wheel), "--against", "1.4.1", "1.5.0", "1.5.1")
    assert code == 0 and doc["errors"] == 0, [r for r in doc["rows"] if r["severity"] == "error"]
    rows = {(r["check"], r["subject"]): r for r in doc["rows"]}
    for lib in (
        "reference_variant/lib/libreference_core.so",
        "reference_variant/lib/libreference_variant.so",
    ):
        assert rows[("abi 1.5.1", lib)]["verdict"] == "binary compatible"
        assert rows[("abi 1.5.0", lib)]["verdict"] == "binary compatible"
        assert rows[("abi 1.4.1", lib)]["verdict"] == "must rebuild"  # not admitted: not an error
    assert (
        "judged as loaded by reference_variant/lib/libreference_variant.so"
        in rows[("abi 1.5.1", "reference_variant/lib/libreference_core.so")]["why"]
    )
    paths = [r["why"] for r in doc["rows"] if r["check"] == "paths"]
    assert (
        "NEEDED libreference_core.so: reference_variant/lib/libreference_core.so in the wheel (RUNPATH $ORIGIN)"
        in paths
    )
    req = rows[("requirement", "executorch<1.6,>=1.5")]
    assert req["severity"] == "warning" and "binary compatible with 1.5.0, 1.5.1" in req["why"]
    assert "admits releases after 1.5.1" in req["why"]


def _rewritten(wheel: Path, out: Path, replace: dict[str, bytes]) -> Path:
    """A copy of ``wheel`` with some members replaced or added (the test's own edits)."""
    target = out / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(target, "w") as dst:
        for info in src.infolist():
            if info.filename not in replace:
                dst.writestr(info, src.read(info))
        for name, data in replace.items():
            dst.writestr(name, data)
    return target


@needs_tools
def test_a_requirement_that_admits_a_rebuild_release_is_an_error(split_wheel, tmp_path, capsys):
    with zipfile.ZipFile(split_wheel) as z:
        meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = (
            z.read(meta_name)
            .decode()
            .replace("Requires-Dist: executorch<1.6,>=1.5", "Requires-Dist: executorch>=1.4,<1.6")
        )
    wheel = _rewritten(split_wheel, tmp_path, {meta_name: meta.encode()})
    code, doc, _ = check_wheel(capsys, str(wheel), "--against", "1.4.1", "1.5.0", "1.5.1")
    errors = [r for r in doc["rows"] if r["severity"] == "error"]
    assert code == 1 and [r["check"] for r in errors] == ["requirement"], errors
    assert errors[0]["why"].startswith(
        "executorch<1.6,>=1.4 admits executorch 1.4.1, for which reference_variant/lib/libreference_core.so, "
        "reference_variant/lib/libreference_variant.so are not usable"
    )


@needs_tools
def test_a_wheel_with_a_private_registry_library_is_an_error(split_wheel, private, tmp_path, capsys):
    wheel = _rewritten(
        split_wheel,
        tmp_path,
        {"reference_variant/lib/libprivate_registry.so": private["exported"].read_bytes()},
    )
    code, doc, _ = check_wheel(capsys, str(wheel), "--against", "1.5.1")
    errors = [r for r in doc["rows"] if r["severity"] == "error" and r["check"].startswith("abi")]
    assert code == 1 and [(r["check"], r["subject"], r["verdict"]) for r in errors] == [
        ("abi 1.5.1", "reference_variant/lib/libprivate_registry.so", "carries its own registry")
    ], errors
    assert "What to do: link executorch 1.5.1's shared runtime" in errors[0]["why"]
    # Not also counted against the requirement: the abi row is the error.
    assert not [r for r in doc["rows"] if r["check"] == "requirement" and r["severity"] == "error"]


@needs_tools
def test_a_runpath_into_the_build_machine_is_an_error(split_wheel, private, tmp_path, capsys):
    """The private-registry build is not installed: its RUNPATH still names the build tree."""
    wheel = _rewritten(
        split_wheel, tmp_path, {"reference_variant/lib/libbuildtree.so": private["hidden"].read_bytes()}
    )
    code, doc, _ = check_wheel(capsys, str(wheel), "--against", "1.5.1")
    paths = [r["why"] for r in doc["rows"] if r["check"] == "paths" and r["severity"] == "error"]
    assert code == 1 and paths and all("is an absolute path" in p for p in paths), paths


# --------------------------------------------------------------------------- bad input


def test_check_wheel_refuses_what_is_not_a_wheel(tmp_path, capsys):
    cases = {
        "no such file": tmp_path / "absent-1.0-py3-none-any.whl",
        "is a directory": tmp_path,
    }
    fifo = tmp_path / "pipe-1.0-py3-none-any.whl"
    os.mkfifo(fifo)
    cases["not a regular file"] = fifo
    junk = tmp_path / "junk-1.0-py3-none-any.whl"
    junk.write_text("not a zip\n")
    cases["is not a readable wheel (zip) file"] = junk
    badname = tmp_path / "notawheel.whl"
    badname.write_bytes(b"")
    cases["is not a wheel file name"] = badname
    slip = tmp_path / "slip-1.0-py3-none-any.whl"
    with zipfile.ZipFile(slip, "w") as z:
        z.writestr("../outside.txt", "x")
    cases["which would be written outside site-packages"] = slip
    nometa = tmp_path / "nometa-1.0-py3-none-any.whl"
    with zipfile.ZipFile(nometa, "w") as z:
        z.writestr("nometa/__init__.py", "")
    cases["has no *.dist-info/METADATA"] = nometa
    for says, path in cases.items():
        code, _, err = check_wheel(capsys, str(path))
        assert code == 2 and says in err, (says, err)
    assert not (tmp_path.parent / "outside.txt").exists()


@needs_tools
def test_check_wheel_unknown_release_and_unknown_build(split_wheel, tmp_path, capsys):
    code, _, err = check_wheel(capsys, str(split_wheel), "--against", "9.9.9")
    assert code == 2 and "no ABI data for executorch 9.9.9" in err and "1.5.1" in err
    with zipfile.ZipFile(split_wheel) as z:
        info = next(n for n in z.namelist() if n.endswith("lib/build_info.json"))
    stripped = tmp_path / "nobuildinfo"
    stripped.mkdir()
    with zipfile.ZipFile(split_wheel) as src, zipfile.ZipFile(stripped / split_wheel.name, "w") as dst:
        for item in src.infolist():
            if item.filename != info:
                dst.writestr(item, src.read(item))
    code, _, err = check_wheel(capsys, str(stripped / split_wheel.name))
    assert code == 2 and "pass --built-against RELEASE" in err and "admits 1.5.0, 1.5.1" in err
