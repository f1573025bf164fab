"""Verdicts rest on results that were obtained: each deliberately broken
backend below fails the check that guards the clause for the reason it
breaks it, and backends that are right in unusual ways pass."""

from __future__ import annotations

import os
import re
import subprocess
import time

import pytest
from suite_runner import BROKEN, PLAIN_PYTEST, results_by_id, run_suite

from conformance.checks.aot import claims_only_supported
from conformance.context import PartitionRecord
from conformance.outcomes import CheckFailed

# descriptor, checks, env, {check: (outcome, pattern)}
CASES = {
    "process-dependent blob": (
        "PROCESS_DEPENDENT",
        "AOT-5",
        {},
        {
            "AOT-5": (
                "failed",
                r"blob 0 of 'mlp' differs between the first lowering and a lowering in a new process",
            )
        },
    ),
    "partitioner that raises": (
        "RAISING_PARTITIONERS",
        "AOT-1,AOT-2,AOT-3",
        {},
        dict.fromkeys(
            ("AOT-1", "AOT-2", "AOT-3"),
            (
                "failed",
                r"make_partitioners\(\) raised RuntimeError: no NPU driver found \(at .*descriptors\.py:\d+\)",
            ),
        ),
    ),
    "sample whose make() raises": (
        "BAD_SAMPLE",
        "AOT-3,RT-3",
        {},
        dict.fromkeys(
            ("AOT-3", "RT-3"),
            ("failed", r"make\(\) of sample model 'broken' raised ValueError: weights file missing"),
        ),
    ),
    "runtime_libraries() raises": (
        "RUNTIME_LIBRARIES_RAISE",
        "RT-1",
        {},
        {"RT-1": ("failed", r"runtime_libraries\(\) raised TypeError: runtime_libraries\(\) takes a path")},
    ),
    "runtime library that does not exist": (
        "MISSING_LIBRARY",
        "RT-1",
        {},
        {
            "RT-1": (
                "failed",
                r"runtime_libraries\(\) names /nonexistent/libvendor_runtime.so, which does not exist",
            )
        },
    ),
    "runtime library that did not register": (
        "OTHER_LIBRARY",
        "RT-1",
        {},
        {
            "RT-1": (
                "failed",
                r"liblenient_backend.so, which is not loaded in the process after load_runtime\(\)",
            )
        },
    ),
    "runtime that runs a newer minor": (
        "ACCEPTS_NEWER_MINOR",
        "RT-5",
        {"LENIENT_MINOR_ONLY": "1"},
        {
            "RT-5": (
                "failed",
                (
                    r"the runtime loaded a blob whose header claims blob format 1\.\d+ from a newer backend "
                    r"release; it must refuse it"
                ),
            )
        },
    ),
    "runtime that crashes above a dynamic bound": (
        "CRASHES_ABOVE_BOUND",
        "DYN",
        {},
        {
            "DYN-1": ("passed", r"ran input shapes \[\[1, 1, 16\]\], \[\[4, 8, 16\]\]"),
            "DYN-2": (
                "crashed",
                (
                    r"crashed with SIGSEGV in execute of sample 'token_mlp' with dimension batch at 5, above "
                    r"its bound 4 \(input shapes \[\[5, 1, 16\]\]\); the runtime logged: "
                    r".*CrashesAboveBoundBackend: copying input 0 \(dimension 0 is 5\)"
                ),
            ),
        },
    ),
    "partitioner that steals exp from XNNPACK": (
        "STEALS_FROM_XNNPACK",
        "CMP",
        {},
        {
            "CMP-1": (
                "failed",
                (
                    r"has no XnnpackBackend delegate: the backend's partitioner left XNNPACK nothing; it "
                    r"claimed aten::exp, not in its declared operators"
                ),
            ),
            "CMP-2": (
                "failed",
                (
                    r"load of sample 'partially_delegated' with XNNPACK failed: .*0x:23; the runtime logged: "
                    r".*GreedyBackend: invalid blob: .*op \d+ has unknown opcode 23"
                ),
            ),
        },
    ),
}


@pytest.mark.full
@pytest.mark.parametrize("case", list(CASES))
def test_broken_backend_fails_the_right_check(tmp_path, broken_runtime_dir, case):
    name, checks, env, expected = CASES[case]
    code, report, output = run_suite(
        tmp_path,
        f"broken_backends.descriptors:{name}",
        "--checks",
        checks,
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir), **env},
    )
    assert report is not None, output
    results = results_by_id(report)
    for check_id, (outcome, pattern) in expected.items():
        assert results[check_id]["outcome"] == outcome, results[check_id]
        assert re.search(pattern, results[check_id]["reason"]), results[check_id]["reason"]
    assert code == 1 and report["verdict"] == "not conformant"
    assert "Traceback" not in output and "INTERNALERROR" not in output


@pytest.mark.full
def test_one_cause_of_many_failures_is_said_once(tmp_path):
    _code, report, _ = run_suite(
        tmp_path, "broken_backends.descriptors:RAISING_PARTITIONERS", "--checks", "AOT"
    )
    (reason,) = [r for r in report["verdict_reasons"] if "for one cause" in r]
    assert re.match(
        r"6 checks failed for one cause \(AOT-1, AOT-2, AOT-3, AOT-4, AOT-5, AOT-6\): make_partitioners\(\) "
        r"raised RuntimeError: no NPU driver found",
        reason,
    ), reason
    assert len(report["verdict_reasons"]) == 1


@pytest.mark.full
def test_a_runtime_library_error_is_recorded_in_the_report(tmp_path):
    _code, report, _ = run_suite(
        tmp_path, "broken_backends.descriptors:RUNTIME_LIBRARIES_RAISE", "--checks", "PKG"
    )
    (lib,) = report["backend"]["runtime_libraries"]
    assert lib["sha256"] is None and "runtime_libraries() raised TypeError" in lib["error"]


@pytest.mark.full
def test_a_backend_registered_before_load_runtime_fails_rt1(tmp_path):
    _code, report, _output = run_suite(
        tmp_path, "broken_backends.preregistered:DESCRIPTOR", "--checks", "RT-1,RT-2"
    )
    results = results_by_id(report)
    assert results["RT-1"]["outcome"] == "failed"
    assert "'ReferenceBackend' was already registered before load_runtime() ran" in results["RT-1"]["reason"]


@pytest.mark.full
def test_pre_decomposition_hook_of_the_vendor_partitioner_is_kept(tmp_path):
    """The partitioner rewrites clamp(min=0) into relu in transform_for_pre_decomposition: the suite
    lowers with the vendor's own object, so the hook runs and the sample is delegated and correct."""
    code, report, output = run_suite(
        tmp_path, "broken_backends.descriptors:PRE_DECOMPOSITION", "--checks", "AOT-2,AOT-4,SER,RT-3"
    )
    assert code == 0, output
    assert {r["outcome"] for r in report["results"]} == {"passed"}, report["results"]


@pytest.mark.full
def test_a_prerelease_backend_version_passes_rt5(tmp_path):
    code, report, output = run_suite(tmp_path, "broken_backends.descriptors:PRERELEASE", "--checks", "RT-5")
    assert code == 0, output
    assert results_by_id(report)["RT-5"]["outcome"] == "passed"


class _Records:
    """Just enough of a Context for AOT-4: recorded partition results."""

    class descriptor:
        backend_id = "ReferenceBackend"
        operators = frozenset({"aten::relu.default"})  # only membership is asked
        sample_models = [type("S", (), {"name": "m"})]  # noqa: RUF012  a descriptor's plain list

    def __init__(self, ops, non_ops):
        self.record = PartitionRecord("P", {"t0": ("ReferenceBackend", ())}, ops, non_ops, frozenset({"t0"}))

    def partition_records(self, name):
        return (self.record,)


def test_aot4_ignores_nodes_that_are_not_operators_and_says_so():
    ctx = _Records((("relu", "aten::relu.default", "t0"),), (("getitem", "getitem", "t0"),))
    assert claims_only_supported(ctx) == "ignored tagged nodes that are not operators: getitem"
    ctx = _Records((("relu", "aten::relu.default", "t0"), ("max", "aten::max.dim", "t0")), ())
    with pytest.raises(CheckFailed, match=r"claimed aten::max.dim in sample model 'm'"):
        claims_only_supported(ctx)


def _with_vendor_pytest_plugin(tmp_path) -> dict[str, str]:
    """An installed distribution (a .dist-info on the path) whose pytest11 entry point is tampering_plugin."""
    site = tmp_path / "site"
    info = site / "tampering_vendor-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tampering-vendor\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\ntampering = tampering_plugin\n")
    return {"PYTHONPATH": os.pathsep.join([str(site), str(BROKEN), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.full
@pytest.mark.parametrize("how", ["descriptor module", "pytest plugin"])
def test_vendor_code_cannot_change_the_verdict(tmp_path, how):
    """The descriptor's module (on import) or a pytest plugin of the vendor's package replaces the verdict
    function and every check's code: the descriptor is imported only in the vendor process and the CLI
    loads only the suite's plugins, so the private import still fails PKG-2 (selected in lower case) and
    the run is not conformant."""
    if how == "descriptor module":
        backend, env = "broken_backends.tampering:DESCRIPTOR", {}
    else:
        backend, env = "broken_backends.descriptors:PRIVATE_IMPORT", _with_vendor_pytest_plugin(tmp_path)
    code, report, output = run_suite(tmp_path / "out", backend, "--checks", "pkg-2", env=env)
    assert report is not None, output
    assert [(r["id"], r["outcome"]) for r in report["results"]] == [("PKG-2", "failed")], report["results"]
    assert "executorch.exir._serialize" in report["results"][0]["reason"]
    assert code == 1 and report["verdict"] == "not conformant"


HOSTILE_IMPORTS = {
    "segv": r"crashed with SIGSEGV in loading the descriptor 'broken_backends\.hostile_import:DESCRIPTOR' "
    r"\(importing its module\)",
    "exit0": r"crashed with exit code 0 in loading the descriptor",
    "hang": r"timed out after 5 s in loading the descriptor",
}


@pytest.mark.parametrize(
    "how",  # a CLI process each (one waits out its timeout): the default tier keeps segv
    [pytest.param(h, marks=() if h == "segv" else pytest.mark.full) for h in HOSTILE_IMPORTS],
)
def test_a_descriptor_module_that_crashes_exits_or_hangs_on_import_is_a_descriptor_error(tmp_path, how):
    """Importing the descriptor's module kills its process, exits with status 0 or never returns: the CLI
    says so in one line with exit code 4 (never a crash of its own, a silent exit 0, or a hang)."""
    started = time.monotonic()
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.hostile_import:DESCRIPTOR",
        "--checks",
        "PKG-1",
        "--timeout",
        # only the hang waits out its timeout; the others must not race a short one on a busy machine
        "5" if how == "hang" else "300",
        env={"HOSTILE_IMPORT": how},
    )
    assert code == 4 and report is None, output
    lines = [line for line in output.splitlines() if line.strip() and "resource_tracker" not in line]
    assert len(lines) == 1 and re.search(HOSTILE_IMPORTS[how], lines[0]), output
    assert "Traceback" not in output
    assert time.monotonic() - started < 120


def test_what_a_vendor_process_prints_before_the_suite_runs_in_it_stays_in_the_vendor_log(tmp_path):
    """A vendor process prints before the suite's own code runs in it (an SDK's sitecustomize or .pth
    banner, multiprocessing's own traceback when the pool is torn down under a starting worker): none
    of it reaches the terminal; it is in vendor-process.log."""
    noise = BROKEN.parent / "broken" / "startup_noise"
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:NO_NAMED_DATA",
        "--checks",
        "PKG-1",
        env={"PYTHONPATH": os.pathsep.join([str(noise), str(BROKEN), os.environ.get("PYTHONPATH", "")])},
    )
    assert code == 0 and report is not None, output
    assert "VENDOR-SDK" not in output and "Traceback" not in output, output
    vendor_log = (tmp_path / "vendor-process.log").read_text()
    assert "VENDOR-SDK BANNER on stdout" in vendor_log and "VENDOR-SDK noise on stderr" in vendor_log


def test_plain_pytest_certifies_only_with_the_suites_own_plugins(tmp_path):
    """Under plain pytest, every installed package's pytest11 plugin runs in the process that judges, so
    --et-certify is refused, naming each foreign plugin and its distribution, until only pytest's, the
    suite's and pytest-xdist's plugins are loaded."""
    env = dict(os.environ, **_with_vendor_pytest_plugin(tmp_path))
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    base = [*PLAIN_PYTEST, "--et-backend", "ReferenceBackend"]
    base += ["--et-certify", "--et-report", str(tmp_path / "r.json"), "-p", "no:cacheprovider", "--co", "-q"]
    # from a directory of its own: pytest would load a tests/conftest.py of the working directory too
    refused = subprocess.run(base, capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR, refused.stdout + refused.stderr
    assert re.search(
        r"--et-certify: pytest loaded plugins that are not the suite's own.*tampering_plugin \(tampering-vendor 1\.0\)",
        refused.stderr,
    ), refused.stderr
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    accepted = subprocess.run(
        [*base, "-p", "conformance.plugin"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=tmp_path,
    )
    # accepted: collected, and (with --co) nothing ran, so not conformant
    assert accepted.returncode == pytest.ExitCode.TESTS_FAILED, accepted.stdout + accepted.stderr
    assert "not the suite's own" not in accepted.stderr and "test_check[AOT-1]" in accepted.stdout
