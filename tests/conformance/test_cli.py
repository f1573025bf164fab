"""The suite against the reference backend, end to end through the CLI and
through plain pytest; reports, badges, verification and expectations."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET

import pytest
from suite_runner import PLAIN_PYTEST, results_by_id, run_suite

from conformance.checks import all_checks
from conformance.descriptor import CAPABILITY_ABSENT
from conformance.profiles import PROFILES, certified_profiles
from conformance.version import SUITE_VERSION


@pytest.fixture
def certified(reference_certify_run):
    """The session's one certify run of the reference backend (conftest.py): it is read, never changed."""
    return reference_certify_run


def test_reference_backend_is_certified(certified):
    code, report, output, _out = certified
    assert code == 0, output
    assert report["verdict"] == "certified" and report["certified"] is True
    assert {r["id"] for r in report["results"]} == {c.id for c in all_checks()}
    # PKG-7 (SHOULD) applies only to a backend installed from a wheel file; bootstrap installs from source.
    # STATE-2 applies only to partitioners that claim mutated buffers, which the reference backend's do not.
    assert all(r["outcome"] == "passed" for r in report["results"] if r["id"] not in ("PKG-7", "STATE-2"))
    assert results_by_id(report)["STATE-2"]["outcome"] == "not_applicable"
    assert results_by_id(report)["PKG-7"]["outcome"] in ("passed", "not_applicable")
    assert "verdict: CERTIFIED (certify mode)" in output
    for check in all_checks():  # the table lists every check with its clause
        assert any(line.split()[:3] == [check.id, check.clause, check.level] for line in output.splitlines())


def test_report_records_environment_backend_and_command(certified):
    _, report, _, _ = certified
    assert report["environment"]["executorch"].startswith("1.5.1")
    assert report["environment"]["torch"].startswith("2.13.0")
    assert report["backend"]["distribution"] == "executorch-reference-backend"
    (lib,) = report["backend"]["runtime_libraries"]
    assert lib["path"].endswith("libreference_backend_runtime.so") and len(lib["sha256"]) == 64
    assert report["command"].startswith("executorch-conformance run --backend ReferenceBackend")
    assert report["mode"] == "certify" and report["suite_version"] == SUITE_VERSION
    assert report["options"]["certify"] is True and report["selected"] == [c.id for c in all_checks()]


def test_junit_and_badge_are_written(certified):
    _, report, _, out = certified
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")  # noqa: S314  the suite's own output
    assert int(suite.get("tests")) == len(all_checks()) and int(suite.get("failures")) == 0
    badge = json.loads((out / "badge.json").read_text())
    # all but STATE-2 (the reference backend declares no mutable_state) and PKG-7 when the backend was not
    # installed from a wheel
    passed = report["summary"]["passed"]
    assert passed >= len(all_checks()) - 2
    # the badge names the profiles the run certifies: every one but Stateful programs (not claimed)
    certified = certified_profiles(report["profiles"])
    assert certified == [p.name for p in PROFILES if p.id != "stateful_programs"]
    assert badge["schemaVersion"] == 1 and badge["message"].startswith(
        " + ".join(certified) + " on executorch 1.5"
    )
    svg = (out / "badge.svg").read_text()
    assert svg.startswith("<svg") and "Core + Versioned blobs" in svg
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert (
        properties["profile:core"] == "certified" and properties["profile:stateful_programs"] == "not claimed"
    )
    assert properties["certifies"] == " + ".join(certified)


@pytest.mark.full
def test_expectations_mark_checks_and_certify_forbids_expected_failures(tmp_path, broken_runtime_dir):
    expectations = tmp_path / "expect.toml"
    expectations.write_text(
        '[expected_failures]\n"RT-3" = "weights are off by design"\n\n[not_applicable]\n"RT-5" = "no forged blobs here"\n'
    )
    env = {"BROKEN_RUNTIME_DIR": str(broken_runtime_dir)}
    code, report, output = run_suite(
        tmp_path / "r",
        "broken_backends.descriptors:WRONG_NUMERICS",
        "--checks",
        "RT-3,RT-5,RT-1",
        "--expectations",
        str(expectations),
        env=env,
    )
    results = results_by_id(report)
    assert (
        results["RT-3"]["outcome"] == "expected_failure"
        and results["RT-3"]["reason"] == "weights are off by design"
    )
    assert (
        results["RT-5"]["outcome"] == "not_applicable" and "no forged blobs here" in results["RT-5"]["reason"]
    )
    assert results["RT-1"]["outcome"] == "passed"
    assert code == 0 and report["verdict"] == "conformant"
    code, report, output = run_suite(
        tmp_path / "c",
        "broken_backends.descriptors:WRONG_NUMERICS",
        "--certify",
        "--expectations",
        str(expectations),
        env=env,
    )
    assert (
        code != 0
        and "--certify forbids expected failures" in output
        and "RT-3 (weights are off by design)" in output
    )


def test_expectation_matching_no_check_is_refused(tmp_path):
    expectations = tmp_path / "expect.toml"
    expectations.write_text('[expected_failures]\n"NOPE-9" = "typo"\n')
    code, _, output = run_suite(tmp_path, "ReferenceBackend", "--expectations", str(expectations))
    assert code != 0 and "'NOPE-9' matches no check" in output


def test_unknown_backend_is_named_with_the_known_ones(tmp_path):
    code, _, output = run_suite(tmp_path, "NoSuchBackend")
    assert code == 4
    assert "no backend named 'NoSuchBackend'" in output and "ReferenceBackend" in output


@pytest.mark.parametrize(
    ("backend", "message"),
    [
        (":DESCRIPTOR", r"backend ':DESCRIPTOR' is not 'module:attribute' \(module '\(empty\)'"),
        pytest.param(  # a whole CLI process each: the default tier keeps the first
            "broken_backends.raising_module:DESCRIPTOR",
            r"importing 'broken_backends.raising_module' for backend .* raised RuntimeError: the vendor module fails on import",
            marks=pytest.mark.full,
        ),
        pytest.param(
            "broken_backends.descriptors:NOT_THERE",
            r"module 'broken_backends.descriptors' has no attribute 'NOT_THERE'",
            marks=pytest.mark.full,
        ),
    ],
)
def test_descriptor_errors_are_one_line_with_exit_4(tmp_path, backend, message):
    code, report, output = run_suite(tmp_path, backend)
    assert code == 4 and report is None, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and re.search(message, lines[0]), output
    assert "Traceback" not in output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--checks", "NOPE-9"], r"--checks 'NOPE-9' selects unknown NOPE-9; give check IDs"),
        (["--checks", ","], r"--checks ',' selects nothing"),
        (["-n", "-1"], r"-n/--workers must be 1 \(in this process\) or more, not -1"),
        (
            ["--timeout", "0"],
            r"--timeout must be a positive number of seconds, at most 86400 \(a day\), not 0",
        ),
        (["--timeout", "inf"], r"--timeout must be a positive number of seconds, at most 86400 .* not inf"),
        (["--timeout", "nan"], r"--timeout must be .* not nan"),
        (["--memory-limit", "-1"], r"--memory-limit must be a positive number of GiB, not -1"),
    ],
)
def test_usage_errors_write_no_report_and_no_badge(tmp_path, args, message):
    code, report, output = run_suite(tmp_path, "ReferenceBackend", *args)
    assert code == 2 and report is None, output
    assert re.search(message, output), output
    assert not (tmp_path / "badge.json").exists()


@pytest.mark.full
def test_plain_pytest_spelling_runs_the_same_checks(tmp_path):
    proc = subprocess.run(
        [
            *PLAIN_PYTEST,
            "--et-backend",
            "ReferenceBackend",
            "--et-checks",
            "PKG",
            "--et-report",
            str(tmp_path / "r.json"),
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert sorted(r["id"] for r in report["results"]) == [
        c.id for c in all_checks() if c.id.startswith("PKG-")
    ]
    assert report["mode"] == "standard" and report["verdict"] == "conformant"


def test_certify_cannot_run_a_subset_of_checks(tmp_path):
    code, report, output = run_suite(tmp_path, "ReferenceBackend", "--certify", "--checks", "PKG")
    assert code == 2 and report is None
    assert "--certify runs every check; it cannot be combined with --checks" in output


def test_should_failures_are_warnings_not_verdicts():
    from conformance.report import verdict

    results = [
        {"id": "AOT-1", "level": "MUST", "outcome": "passed", "reason": ""},
        {"id": "PKG-3", "level": "SHOULD", "outcome": "failed", "reason": "version differs"},
    ]
    text, reasons, warnings = verdict(results, certify=True)
    assert text == "certified" and reasons == []
    assert warnings == ["PKG-3 (SHOULD) failed: version differs"]
    results[0]["outcome"] = "failed"
    assert verdict(results, certify=False)[0] == "not conformant"


def test_conditional_checks_do_not_block_certification_of_backends_without_the_capability():
    from conformance.report import verdict

    results = [
        {"id": "RT-1", "level": "MUST", "outcome": "passed", "reason": "", "applies_if": None},
        {
            "id": "NDATA-1",
            "level": "MUST",
            "outcome": "not_applicable",
            "reason": "no named data",
            "applies_if": "named_data",
        },
    ]
    assert verdict(results, certify=True, capabilities=[])[0] == "certified"
    # Declared but not applicable for another reason: blocks.
    assert verdict(results, certify=True, capabilities=["named_data"])[0] == "not conformant"
    # An unconditional MUST check that did not run always blocks certification.
    results[0]["outcome"] = "not_applicable"
    assert verdict(results, certify=True, capabilities=[])[0] == "not conformant"
    # verify applies the same rule to a submitted report: tests/certification/test_verify.py.


@pytest.mark.full
def test_checks_that_raise_not_applicable_are_reported_as_such(tmp_path):
    """NotApplicable raised inside a check (here: no named data declared) is
    'not_applicable', not a failure."""
    # NDATA-2 declared not applicable too: for a capability the backend does not declare, the check's own
    # reason (the capability is absent) is what the report records, and what verify accepts as exempt.
    expectations = tmp_path / "expectations.toml"
    expectations.write_text('[not_applicable]\n"NDATA-2" = "we do not use named data"\n')
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:NO_NAMED_DATA",
        "--checks",
        "NDATA",
        "--expectations",
        expectations,
    )
    assert code == 0, output
    results = results_by_id(report)
    assert {r["outcome"] for r in results.values()} == {"not_applicable"}
    assert all(r["reason"] == CAPABILITY_ABSENT["named_data"] for r in results.values())
    assert all(r["applies_if"] == "named_data" for r in results.values())
    assert report["backend"]["capabilities"] == [] and report["verdict"] == "conformant"
    # The exemption verify accepts is the one the run writes.
    from conformance.certification.verify import check_report

    assert check_report(report).ok, check_report(report).problems


def test_the_terminal_shows_progress_and_the_table_only(certified):
    """Nothing the vendor did not ask for comes before the table: one progress line per check (third-party
    warnings, pytest's own output and what the backend prints go to output.log)."""
    _, report, output, out = certified
    lines = output.splitlines()
    start = lines.index(f"executorch conformance: ReferenceBackend {report['backend']['version']}")
    progress = [line for line in lines[:start] if line.strip()]
    total = len(all_checks())
    assert len(progress) == total, progress
    assert all(
        re.match(
            rf"\[\s*\d+/{total}\] [A-Z]+-\d+\s+(PASS|N/A)\s+[\d.]+ s( \(\+[\d.]+ s shared setup\))?$", line
        )
        for line in progress
    ), progress
    after = [line for line in lines[start + 1 :] if line.strip()]
    assert after[0].split()[:3] == ["check", "clause", "level"]
    assert [line.split(":")[0] for line in after[-5:]] == ["report", "log", "junit", "badge", "page"], after
    assert any(line.startswith("verdict: CERTIFIED") for line in after)
    assert (out / "output.log").exists()


def test_plain_pytest_writes_the_page_badge_and_operator_junit_beside_its_report(tmp_path):
    """The plugin owns its output: a vendor running the suite as plain pytest gets what the CLI writes."""
    report_path = tmp_path / "out" / "conformance.json"
    proc = subprocess.run(
        [
            *PLAIN_PYTEST,
            "--et-backend",
            "ReferenceBackend",
            "--et-checks",
            "OPS-1",
            "--et-ops",
            "aten::relu",
            "--et-report",
            str(report_path),
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = report_path.parent
    report = json.loads(report_path.read_text())
    assert report["verdict"] == "conformant"
    page = (out / "conformance.html").read_text()
    assert "ReferenceBackend" in page
    assert json.loads((out / "badge.json").read_text())["schemaVersion"] == 1 and (out / "badge.svg").exists()
    cases = (out / "junit-operators.xml").read_text()
    assert 'classname="aten::relu float32"' in cases
    for line in (f"page: {out / 'conformance.html'}", f"badge: {out / 'badge.svg'}", "junit (one testcase"):
        assert line in proc.stdout, proc.stdout


def test_a_report_named_like_a_file_written_beside_it_is_refused(tmp_path):
    proc = subprocess.run(
        [
            *PLAIN_PYTEST,
            "--et-backend",
            "ReferenceBackend",
            "--et-report",
            str(tmp_path / "badge.json"),
            "-q",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0 and not (tmp_path / "badge.json").exists()
    assert (
        "--et-report" in proc.stderr + proc.stdout
        and "give the report another name" in proc.stderr + proc.stdout
    )


def test_list_backends_names_the_installed_ones_and_the_descriptors_the_suite_ships(capsys):
    from conformance.cli import main

    assert main(["list", "--backends"]) == 0
    out = capsys.readouterr().out
    assert "ReferenceBackend         reference_backend.conformance:DESCRIPTOR" in out
    assert "XnnpackBackend           scoreboard.xnnpack.descriptor:DESCRIPTOR" in out


def test_an_id_of_executorchs_own_delegate_is_pointed_at_the_shipped_descriptor():
    from conformance.descriptor import DescriptorError, load_descriptor

    with pytest.raises(
        DescriptorError,
        match=r"ships a descriptor of ExecuTorch's own XnnpackBackend: "
        r"--backend scoreboard\.xnnpack\.descriptor:DESCRIPTOR",
    ):
        load_descriptor("XnnpackBackend")
    with pytest.raises(DescriptorError, match=r"list --backends names what is installed"):
        load_descriptor("NoSuchBackend")
