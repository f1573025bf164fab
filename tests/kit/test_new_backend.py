"""``executorch-conformance new-backend NAME``: a bad NAME or DIR is a one-line
error with exit code 2; a good one writes the kit's template with the new
names; and what it writes builds, passes its own tests and is CERTIFIED by the
suite (the full test: generate, build a wheel against this venv's executorch,
install it, run its tests and ``executorch-conformance run --certify``)."""

from __future__ import annotations

import json
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from conformance.cli import main
from conformance.new_backend import (
    TEMPLATE_DISTRIBUTION,
    TEMPLATE_ID,
    TEMPLATE_MACRO,
    TEMPLATE_PACKAGE,
    Names,
    substitutions,
    template_files,
)

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "kit" / "backend_kit" / "template"
BIN = Path(sys.executable).parent


def new_backend(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["new-backend", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("1Backend", "'1Backend' is not an identifier"),
        ("Acme-Npu", "'Acme-Npu' is not an identifier"),
        ("Acme Npu", "'Acme Npu' is not an identifier"),
        ("", "'' is not an identifier"),
        ("ÄcmeBackend", "is not an identifier: use ASCII letters"),
        ("_AcmeBackend", "'_AcmeBackend' is not an identifier"),
        ("Acme__Backend", "contains '__', which C++ reserves"),
        ("class", "NAME 'class' is a Python keyword"),
        ("match", "NAME 'match' is a Python keyword"),
        ("int", "NAME 'int' is a C++ keyword"),
        ("Class", "the package name derived from Class 'class' is a Python keyword; choose another NAME"),
        ("Namespace", "the package name derived from Namespace 'namespace' is a C++ keyword"),
        ("B" * 256, "a backend id has at most 255"),
        (
            "XnnpackBackend",
            "XnnpackBackend is the id of a backend of ExecuTorch itself (executorch/backends/xnnpack",
        ),
        ("QnnBackend", "QnnBackend is the id of a backend of ExecuTorch itself"),
        ("Torch", "the package name torch derived from Torch is already importable here"),
        ("BackendKit", "the package name backend_kit derived from BackendKit is already importable here"),
        (TEMPLATE_ID, "TemplateBackend is the template's own name"),
        (
            "acme_npu",
            (
                "NAME 'acme_npu' starts with a lower-case letter; it becomes the backend id every .pte "
                "names and the class of your BackendDetails, so write it as a class name: AcmeNpuBackend"
            ),
        ),
        ("acmeNpuBackend", "write it as a class name: AcmeNpuBackend"),
    ],
)
def test_a_bad_name_is_one_line_and_exit_2(capsys, tmp_path, name, says):
    code, out, err = new_backend(capsys, name, "--dir", str(tmp_path / "out"))
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("executorch-conformance new-backend: "), err
    assert says in err, err
    assert not (tmp_path / "out").exists()


def test_a_non_empty_directory_is_refused(capsys, tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    code, _, err = new_backend(capsys, "AcmeNpuBackend", "--dir", str(tmp_path))
    assert code == 2
    assert (
        err
        == f"executorch-conformance new-backend: {tmp_path} exists and is not empty; give --dir a new or empty directory\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_a_file_is_refused(capsys, tmp_path):
    (tmp_path / "file").write_text("")
    code, _, err = new_backend(capsys, "AcmeNpuBackend", "--dir", str(tmp_path / "file"))
    assert code == 2 and err.endswith("file exists and is not a directory\n"), err


def test_the_next_steps_install_the_build_tools_the_package_needs(capsys, tmp_path):
    """In a fresh environment the printed steps work in order: the first pip install brings every build
    requirement of the written pyproject.toml and its executorch, so the --no-build-isolation build that
    follows finds scikit-build-core, cmake and the kit."""
    from packaging.requirements import Requirement

    code, out, _err = new_backend(capsys, "AcmeNpuBackend", "--dir", str(tmp_path / "pkg"))
    assert code == 0
    lines = [line.strip() for line in out.splitlines()]
    first = next(i for i, line in enumerate(lines) if line.startswith("pip install "))
    assert lines[first + 1].startswith('pip install --no-build-isolation ".[test]"'), out
    printed = {Requirement(r.strip('"')).name: r.strip('"') for r in lines[first].split()[2:]}
    pyproject = tomllib.loads((tmp_path / "pkg" / "pyproject.toml").read_text())
    wanted = [*pyproject["build-system"]["requires"], *pyproject["project"]["dependencies"]]
    assert {"scikit-build-core", "cmake", "ninja", "executorch-backend-kit", "executorch"} <= set(printed), (
        out
    )
    for requirement in wanted:
        name = Requirement(requirement).name
        if name in printed:
            assert printed[name] == requirement, (printed[name], requirement)


def test_the_exit_code_of_the_command(tmp_path):
    proc = subprocess.run(
        [str(BIN / "executorch-conformance"), "new-backend", "Acme-Npu", "--dir", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("executorch-conformance new-backend: NAME 'Acme-Npu' is not an identifier")
    assert proc.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("backend_id", "package"),
    [
        ("AcmeNpuBackend", "acme_npu_backend"),
        ("ACMEBackend", "acme_backend"),
        ("Acme_Npu", "acme_npu"),
        ("X", "x"),
    ],
)
def test_names_are_derived_from_the_id(backend_id, package):
    names = Names.of(backend_id)
    assert (names.package, names.distribution, names.macro) == (
        package,
        package.replace("_", "-"),
        package.upper(),
    )


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    """The template rendered as AcmeNpuBackend, by the command."""
    target = tmp_path_factory.mktemp("rendered") / "acme"
    assert main(["new-backend", "AcmeNpuBackend", "--dir", str(target)]) == 0
    return target


def test_every_template_file_is_written_with_the_new_names(rendered):
    written = sorted(p.relative_to(rendered) for p in rendered.rglob("*") if p.is_file())
    expected = sorted(
        Path(str(p).replace(TEMPLATE_PACKAGE, "acme_npu_backend")) for p in template_files(TEMPLATE)
    )
    assert written == expected
    for path in written:
        text = (rendered / path).read_text()
        for old in (TEMPLATE_ID, TEMPLATE_PACKAGE, TEMPLATE_DISTRIBUTION, TEMPLATE_MACRO, "emplate"):
            assert old not in text, f"{path} still says {old!r}"
    assert "AcmeNpuBackend" in (rendered / "python" / "acme_npu_backend" / "version.py").read_text()
    # the identity is stated once, in Python: the C++ includes what the build generates from it
    runtime = (rendered / "runtime" / "backend.cpp").read_text()
    assert '#include "backend_identity.h"' in runtime
    assert '"AcmeNpuBackend"' not in runtime and "acme-npu-backend" not in runtime
    assert "__version__" not in (rendered / "runtime" / "CMakeLists.txt").read_text()


def test_every_substitution_finds_what_it_replaces():
    """A template edit that changes a string the renderer replaces (the kit requirement, the executorch
    release) would otherwise leave the template's value in every generated package."""
    text = "".join((TEMPLATE / p).read_text() for p in template_files(TEMPLATE))
    for old, _new in substitutions(Names("AcmeNpuBackend", "acme_npu_backend", "acme-npu-backend", "ACME")):
        assert old in text, old


def test_the_python_compiles_and_the_metadata_names_the_installed_releases(rendered):
    from executorch.version import __version__ as executorch_version

    import backend_kit

    for path in rendered.rglob("*.py"):
        py_compile.compile(str(path), doraise=True, cfile=str(path.with_suffix(".pyc-test")))
    project = tomllib.loads((rendered / "pyproject.toml").read_text())["project"]
    major, minor = (int(v) for v in executorch_version.split(".")[:2])
    kit_major, kit_minor, kit_patch = (int(v) for v in backend_kit.__version__.split(".")[:3])
    assert project["name"] == "acme-npu-backend"
    assert f"executorch>={major}.{minor},<{major}.{minor + 1}" in project["dependencies"]
    assert (
        f"executorch-backend-kit>={kit_major}.{kit_minor}.{kit_patch},<{kit_major}.{kit_minor + 1}"
        in project["dependencies"]
    )
    assert project["entry-points"]["executorch_conformance.backends"] == {
        "AcmeNpuBackend": "acme_npu_backend.conformance:DESCRIPTOR"
    }


# --------------------------------------------------------------------------- the full test


DISTRIBUTION = "kit-ci-backend"


def _run(argv: list[str], cwd: Path | None = None, timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def _uninstall() -> None:
    _run([sys.executable, "-m", "pip", "uninstall", "-y", "-q", DISTRIBUTION])


def _runtime_checks_through_the_runner(tmp_path: Path) -> dict:
    """The generated README's steps: the runner built from the installed suite's sources
    (``python -m conformance.device_runner``), linked with the installed package's runtime library, and the
    runtime checks run through it with --target local; the report."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    sources = _run([sys.executable, "-m", "conformance.device_runner"])
    assert sources.returncode == 0, sources.stderr
    build = tmp_path / "runner"
    steps = [
        [
            BIN / "cmake",
            "-S",
            sources.stdout.strip(),
            "-B",
            build,
            "-G",
            "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={BIN / 'ninja'}",
            # the package's CMake package, as its README says (kit 0.1.6: CMAKE_PACKAGE)
            f"-DCMAKE_PREFIX_PATH={site / 'executorch'};{site / 'kit_ci_backend'}",
            "-DRUNNER_BACKEND_PACKAGE=KitCiBackend",
            "-DRUNNER_BACKEND_TARGET=KitCiBackend::Backend",
        ],
        [BIN / "cmake", "--build", build],
    ]
    for argv in steps:
        done = _run(argv)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    reports = tmp_path / "reports-local"
    run = [BIN / "executorch-conformance", "run", "--backend", "KitCiBackend", "--checks", "RT"]
    proc = _run(
        [*run, "--target", "local", "--runner", build / "conformance_runner", "--report-dir", reports]
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return json.loads((reports / "report.json").read_text())


@pytest.mark.full
def test_the_generated_package_passes_its_tests_and_is_certified(tmp_path):
    """KitCiBackend generated by the command, built as a wheel against this venv's executorch
    (--no-build-isolation, as bootstrap builds the reference backend), installed into this venv,
    its own tests run, then certified, and its runtime checks run through the conformance runner built
    as its README says (--target local); uninstalled afterwards. One test, so that no two pytest-xdist
    workers install and uninstall the same distribution at once."""
    _uninstall()  # what an interrupted earlier run left behind
    made = _run([BIN / "executorch-conformance", "new-backend", "KitCiBackend", "--dir", tmp_path / "pkg"])
    assert made.returncode == 0, made.stdout + made.stderr
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    built = _run(
        [*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist", tmp_path / "pkg"]
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (tmp_path / "dist").glob("kit_ci_backend-*.whl")
    try:
        done = _run([*pip, "install", "-q", "--no-deps", wheel])
        assert done.returncode == 0, done.stdout + done.stderr

        own = _run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=tmp_path / "pkg"
        )
        assert own.returncode == 0, own.stdout[-3000:] + own.stderr[-2000:]
        assert "5 passed" in own.stdout

        reports = tmp_path / "reports"
        run = [
            BIN / "executorch-conformance",
            "run",
            "--backend",
            "KitCiBackend",
            "--certify",
            "--report-dir",
            reports,
        ]
        proc = _run(run, cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
        local = _runtime_checks_through_the_runner(tmp_path)
    finally:
        _uninstall()
    assert "verdict: CERTIFIED" in proc.stdout
    report = json.loads((reports / "report.json").read_text())
    assert report["verdict"] == "certified"
    outcomes = {r["id"]: r["outcome"] for r in report["results"]}
    not_passed = {i: o for i, o in outcomes.items() if o != "passed"}
    # Only the checks of capabilities the template does not declare stay out (named data, quantized,
    # dynamic shapes, composition, acceptance rules, partitioners claiming mutated buffers).
    declared = set(report["backend"]["capabilities"])
    exempt = {r["id"] for r in report["results"] if r.get("applies_if") and r["applies_if"] not in declared}
    assert set(not_passed) <= exempt, not_passed
    assert {i.split("-")[0] for i in not_passed} <= {"NDATA", "QNT", "DYN", "CMP", "RT", "STATE", "MTH"}, (
        not_passed
    )
    assert set(not_passed.values()) == {"not_applicable"}
    assert local["options"]["target"] == "local" and local["target"]["transport"] == "local"
    through_runner = {r["id"]: r["outcome"] for r in local["results"]}
    assert through_runner["RT-3"] == through_runner["RT-5"] == "passed", through_runner
    assert set(through_runner.values()) <= {"passed", "not_applicable"}, through_runner
    assert (
        outcomes["RT-5"]
        == outcomes["OPS-2"]
        == outcomes["PKG-7"]
        == outcomes["STATE-1"]
        == outcomes["MTH-1"]
        == "passed"
    )
