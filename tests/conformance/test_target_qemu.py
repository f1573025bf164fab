"""The runtime checks on another instruction set: the reference backend's runtime and the runner
cross-built for aarch64 against the aarch64 executorch wheel (scripts/cross_build_runner.py), run
under QEMU's user-mode emulator (``--target qemu-aarch64``) with programs exported on this host.

The short form (CI) runs the RT checks; the whole certify run is of the full tier. A bad qemu
target (no emulator, no sysroot, a runner for this host's machine) is one line before the run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import qemu_build
from check_outcomes import run_checks
from runner_build import runner_file_hashes
from suite_runner import BROKEN, run_suite

from conformance.checks import all_checks
from conformance.cli import main as cli_main
from conformance.targets.runtime import runner_machine

# The full tier (CI; bash scripts/test.sh --full): cross-builds the runner; runs under QEMU
pytestmark = pytest.mark.full

#: Every runtime check of the suite (RT-7, the acceptance rules, among them).
RT = [c.id for c in all_checks() if c.id.startswith("RT-")]


@pytest.fixture(scope="session")
def aarch64_build() -> Path:
    """The reference backend's runtime and the runner, cross-built for aarch64 (once per worker)."""
    qemu_build.require()
    return qemu_build.cross_build("aarch64")


def elf_machine(path: Path) -> str:
    from elftools.elf.elffile import ELFFile

    with open(path, "rb") as f:
        return ELFFile(f).header["e_machine"]


def test_the_rt_checks_pass_on_aarch64_under_qemu(aarch64_build, tmp_path, capsys):
    runner = aarch64_build / "runner" / "conformance_runner"
    # Everything the target runs is aarch64 code: the runner, the backend and the wheel's libraries.
    shipped = [runner, *runner.parent.glob("lib/*.so"), *runner.parent.glob("executorch/lib/*.so")]
    assert {elf_machine(p) for p in shipped} == {"EM_AARCH64"}, shipped
    assert len(shipped) >= 3
    workspace = tmp_path / "workspace"  # on this host: qemu-aarch64:///<dir>
    url = f"qemu-aarch64://{workspace}"
    code, report, output = run_suite(
        tmp_path, "ReferenceBackend", "--checks", "RT", "--target", url, "--runner", str(runner)
    )
    assert report is not None, output
    # RT-9 counts the vendor process's allocator, which a target's runner does not report.
    expected = {**dict.fromkeys(RT, "passed"), "RT-9": "not_applicable"}
    assert {r["id"]: r["outcome"] for r in report["results"]} == expected, output
    assert code == 0, output
    target = report["target"]
    assert target["transport"] == "qemu" and target["url"] == url and url.startswith("qemu-aarch64:///")
    assert Path(target["runner_dir"]).parent == workspace
    # The runner says the machine it runs as; the shell around it is this host's.
    assert target["machine"] == "aarch64" and os.uname().machine in target["uname"]
    assert target["emulator"].startswith("qemu-aarch64 version ")
    assert target["sysroot"] == "/usr/aarch64-linux-gnu"
    assert target["runner_version"].startswith("conformance_runner 0.3.0 (executorch 1.5.1")
    on_target = {
        Path(x["path"]).relative_to(target["runner_dir"]).as_posix(): x["sha256"] for x in target["libraries"]
    }
    assert on_target == runner_file_hashes(runner) and "lib/libreference_backend_runtime.so" in on_target
    capsys.readouterr()
    assert cli_main(["verify", str(tmp_path / "report.json")]) == 0
    assert "machine aarch64 under qemu-aarch64 version" in capsys.readouterr().out


def test_after_a_switch_of_target_the_operator_cases_run_again_there(
    reference_context, aarch64_build, monkeypatch
):
    """Context.use_target keeps the lowerings but not the outputs of the operator cases: OPS-2 run in-process,
    then on qemu-aarch64, executes its cases on the aarch64 runner (matrix/arch_axis.py relies on it)."""
    ctx = reference_context
    monkeypatch.setattr(ctx, "operator_selection", frozenset({"aten::relu"}))
    assert run_checks(ctx, ["OPS-2"])["OPS-2"][0] == "passed"
    ctx.use_target("qemu-aarch64", aarch64_build / "runner" / "conformance_runner")
    try:
        served = []
        serve = ctx.target._serve
        monkeypatch.setattr(
            ctx.target,
            "_serve",
            lambda task, args, what, timeout: served.append((task, what)) or serve(task, args, what, timeout),
        )
        (outcome, reason, _) = run_checks(ctx, ["OPS-2"])["OPS-2"]
        assert outcome == "passed", reason
        assert ctx.target.info["machine"] == "aarch64"
    finally:
        ctx.use_target(None)
    assert [w for t, w in served if t == "execute" and "operator case" in w], served


def test_the_cross_build_records_what_the_target_needs(aarch64_build):
    import json

    info = json.loads((aarch64_build / "cross-build.json").read_text())
    assert info["executorch"].startswith("executorch-1.5.1-")
    assert info["executorch"].endswith("manylinux_2_28_aarch64.whl") and len(info["executorch_sha256"]) == 64
    assert info["compiler"].startswith("aarch64-linux-gnu-g++")
    # The wheel is manylinux_2_28: its libraries need no glibc above 2.28. What is built here against
    # Debian's cross glibc needs that glibc's __libc_start_main: the limit docs/device-runner.md names.
    from packaging.version import Version

    assert Version(info["executorch_glibc_needed"]) <= Version("2.28")
    assert Version(info["glibc_needed"]) >= Version(info["executorch_glibc_needed"])
    assert info["glibc_needed_by"]
    # The wheel's libraries need only each other and the C/C++ runtime of the target's system.
    from elftools.elf.elffile import ELFFile

    system = {"libstdc++.so.6", "libgcc_s.so.1", "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0"}
    shipped = sorted((aarch64_build / "runner" / "executorch" / "lib").glob("*.so"))
    for library in shipped:
        with open(library, "rb") as f:
            dynamic = ELFFile(f).get_section_by_name(".dynamic")
            needed = {t.needed for t in dynamic.iter_tags() if t.entry.d_tag == "DT_NEEDED"}
        assert needed <= system | {p.name for p in shipped}, (library.name, needed)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--arch", "riscv64"], "--arch riscv64: this script builds for aarch64, x86_64"),
        (["--wheel", "/nonexistent/executorch.whl"], "--wheel /nonexistent/executorch.whl: no such file"),
        (["--wheel", __file__], f"{__file__} is not a wheel (not a zip file)"),
        (
            ["--sdk", "HOST"],
            (
                "--sdk HOST: its libexecutorch.so is for EM_X86_64, not EM_AARCH64; give the executorch of the "
                "target's platform"
            ),
        ),
    ],
)
def test_the_cross_build_refuses_bad_input_in_one_line(args, says, tmp_path):
    """Each refusal is one line and exit code 2, before anything is built."""
    qemu_build.require()
    import executorch

    host = next(iter(executorch.__path__))
    argv = [sys.executable, str(qemu_build.SCRIPT), "--out", str(tmp_path / "out")]
    argv += [host if a == "HOST" else a for a in args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == f"cross_build_runner: {says.replace('HOST', host)}"
    assert not (tmp_path / "out" / "runner").exists()


def one_line(*args: str, report_dir: Path, env: dict | None = None) -> str:
    """The one line a `run --backend ReferenceBackend ARGS` that is refused before it starts prints."""
    code, report, output = run_suite(report_dir, "ReferenceBackend", *args, env=env)
    assert code == 2 and report is None, output
    assert "Traceback" not in output
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    return lines[0]


@pytest.fixture
def host_runner(tmp_path) -> Path:
    """An x86-64 executable named like the runner (this Python): a runner built for this host."""
    runner = tmp_path / "host" / "conformance_runner"
    runner.parent.mkdir()
    shutil.copy(sys.executable, runner)
    return runner


def test_a_runner_built_for_this_host_is_refused_before_the_run(host_runner, tmp_path):
    qemu_build.require()
    assert runner_machine(host_runner) == os.uname().machine
    line = one_line("--target", "qemu-aarch64", "--runner", str(host_runner), report_dir=tmp_path / "r")
    assert line == (
        f"executorch-conformance run: the runner at {host_runner} is built for {os.uname().machine}, but "
        "--target qemu-aarch64 runs aarch64 programs: build it for aarch64 (python "
        "scripts/cross_build_runner.py --arch aarch64, docs/device-runner.md)"
    )


@pytest.mark.parametrize(
    ("target", "env", "says"),
    [
        ("qemu-", {}, "--target 'qemu-' names no machine: give qemu-<arch>, e.g. qemu-aarch64"),
        (
            "qemu-aarch64://ws",
            {},
            (
                "--target 'qemu-aarch64://ws': the workspace is a directory of this host, given as "
                "qemu-aarch64:///path"
            ),
        ),
        (
            "qemu-nosuchmachine",
            {},
            (
                "--target qemu-nosuchmachine: qemu-nosuchmachine is not installed on this host; install QEMU's "
                "user-mode emulators (Debian: apt-get install qemu-user)"
            ),
        ),
        (
            "qemu-aarch64",
            {"QEMU_LD_PREFIX": "/nonexistent/sysroot"},
            (
                "--target qemu-aarch64: no aarch64 sysroot at /nonexistent/sysroot (QEMU_LD_PREFIX=/nonexistent/"
                "sysroot): the emulated runner needs its dynamic loader, libc and libstdc++ there"
            ),
        ),
    ],
)
def test_a_bad_qemu_target_is_one_line(target, env, says, host_runner, tmp_path):
    if target == "qemu-aarch64":
        qemu_build.require()
    line = one_line("--target", target, "--runner", str(host_runner), env=env, report_dir=tmp_path / "r")
    assert line == f"executorch-conformance run: {says}"


def test_no_emulator_on_this_host_is_one_line(host_runner, tmp_path):
    empty = tmp_path / "empty-path"
    empty.mkdir()
    line = one_line(
        "--target",
        "qemu-aarch64",
        "--runner",
        str(host_runner),
        env={"PATH": str(empty)},
        report_dir=tmp_path,
    )
    assert line == (
        "executorch-conformance run: --target qemu-aarch64: qemu-aarch64 is not installed on this host; "
        "install QEMU's user-mode emulators (Debian: apt-get install qemu-user)"
    )


def test_a_sysroot_for_a_machine_debian_names_no_triple_for_must_be_given(host_runner, tmp_path):
    if shutil.which("qemu-xtensa") is None:
        pytest.skip(qemu_build.unavailable() or "no qemu-xtensa")
    line = one_line("--target", "qemu-xtensa", "--runner", str(host_runner), report_dir=tmp_path)
    assert line == (
        "executorch-conformance run: --target qemu-xtensa: no sysroot is known for xtensa; set QEMU_LD_PREFIX "
        "to the directory holding its dynamic loader and libraries (lib/, usr/lib/)"
    )


# ------------------------------------------------------------------------------------ faults, emulated

FAULT_TIMEOUT_S = 8  # emulated code is slow: twice the local target's fault timeout
LOGGED = r"the runtime logged: .*MisbehavingBackend: execute is about to {how}"


@pytest.fixture(scope="module")
def emulated_misbehaving_context():
    """The misbehaving backend (tests/conformance/broken/runtime) cross-built into an aarch64 runner."""
    qemu_build.require()
    out = qemu_build.cross_build(
        "misbehaving",
        "--backend-source",
        str(BROKEN / "runtime"),
        "--backend-library",
        "libmisbehaving_backend.so",
    )
    from conformance.context import Context
    from conformance.descriptor import load_descriptor

    sys.path.insert(0, str(BROKEN))
    # The descriptor names its runtime library from here (RT-1 matches it by file name among the mapped ones).
    os.environ["BROKEN_RUNTIME_DIR"] = str(out / "backend")
    spec = "broken_backends.descriptors:MISBEHAVING"
    runner = out / "runner" / "conformance_runner"
    ctx = Context(load_descriptor(spec), spec, timeout=300, target="qemu-aarch64", runner=runner)
    yield ctx
    ctx.close()
    os.environ.pop("BROKEN_RUNTIME_DIR", None)
    sys.path.remove(str(BROKEN))


@pytest.mark.full
@pytest.mark.parametrize(
    ("fault", "outcome", "reason"),
    [
        (None, "passed", ""),  # first: it makes the samples' lowerings with a roomy timeout
        ("execute:segv", "crashed", r"crashed with SIGSEGV in execute of .*" + LOGGED.format(how="segv")),
        (
            "execute:hang",
            "timed_out",
            r"timed out after [\d.]+ s in execute of .*" + LOGGED.format(how="hang"),
        ),
    ],
)
def test_a_fault_of_the_emulated_runtime_is_the_checks_outcome(
    emulated_misbehaving_context, fault, outcome, reason, monkeypatch
):
    """QEMU passes the emulated program's fatal signal and its own alarm() on: a crash is SIGSEGV, a hang
    stops at the check's timeout, as on a device."""
    ctx = emulated_misbehaving_context
    if fault:
        monkeypatch.setenv("MISBEHAVE", fault)
        monkeypatch.setattr(ctx, "timeout", float(FAULT_TIMEOUT_S))
    else:
        monkeypatch.delenv("MISBEHAVE", raising=False)
    (found, said, seconds) = run_checks(ctx, ["RT-3"])["RT-3"]
    assert found == outcome, said
    assert re.search(reason, said), said
    if outcome == "timed_out":
        assert seconds < FAULT_TIMEOUT_S + 15, seconds


# ------------------------------------------------------------------------------------ full tier

#: `run --certify` in this process's Python: every check passes but PKG-7 (needs the wheel file).
IN_PROCESS = {"PKG-7": "not_applicable"}


@pytest.mark.full
def test_certify_on_aarch64_under_qemu_matches_in_process(aarch64_build, tmp_path):
    """Every runtime check and operator case runs on aarch64 code with the in-process outcomes."""
    runner = aarch64_build / "runner" / "conformance_runner"
    code, report, output = run_suite(
        tmp_path, "ReferenceBackend", "--certify", "--target", "qemu-aarch64", "--runner", str(runner)
    )
    assert report is not None, output
    outcomes = {r["id"]: r["outcome"] for r in report["results"]}
    assert outcomes == {i: IN_PROCESS.get(i, "passed") for i in outcomes}, output
    assert {"RT-1", "RT-6", "NDATA-3", "NDATA-4", "DYN-1", "DYN-2", "QNT-3", "CMP-2", "OPS-2"} <= set(
        outcomes
    )
    assert code == 0 and report["verdict"] == "certified", output
    assert report["target"]["machine"] == "aarch64"
    rows = [row for row in report["operators"] if row["cases"]]
    assert rows and all(row["ran"] == row["delegated"] > 0 for row in rows), report["operators"]
