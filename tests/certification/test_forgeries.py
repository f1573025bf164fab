"""Forgeries of a real certify report (tests/certification/data), each resealed with its summary and verdict
recomputed like a careful forger: verify rejects every one with a problem naming what is wrong. Also the
inputs that must not hang, crash or read without bound. Everything here works on JSON; nothing runs the
suite."""

from __future__ import annotations

import base64
import copy
import datetime
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from templates import REAL, finish, real_report

from conformance.certification import attestation as att
from conformance.certification.rerun import rerun_command
from conformance.certification.verify import check_report
from conformance.cli import main
from conformance.descriptor import CAPABILITY_ABSENT
from conformance.report import seal
from conformance.version import SUITE_VERSION

#: The day the fixture report is judged on: the day it was created.
DAY = datetime.date.fromisoformat(json.loads(REAL.read_text())["created"][:10])


@pytest.fixture(scope="module")
def real() -> dict[str, Any]:
    return real_report()


def forge(report: dict[str, Any], fn: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    changed = copy.deepcopy(report)
    changed.pop("content_sha256")
    fn(changed)
    return finish(changed)


def result(report: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(r for r in report["results"] if r["id"] == check_id)


def row(report: dict[str, Any], op: str) -> dict[str, Any]:
    return next(o for o in report["operators"] if o["op"] == op)


def test_the_real_report_verifies(real):
    v = check_report(real, today=DAY)
    assert v.ok and v.verdict == "certified", v.problems


# ----------------------------------------------------------------------------- operators and OPS outcomes


def _ops2_some_failed(r):
    row(r, "aten::add.Tensor").update(passed=10)


def _ops1_undelegated(r):
    row(r, "aten::linear").update(delegated=5, ran=5, passed=5)


def _first_failing(r):
    row(r, "aten::relu")["first_failing"] = {"case": "relu_nan", "reason": "output differs"}


def _nothing_ran(r):
    for o in r["operators"]:
        o.update(ran=0, passed=0, worst_error=None, tolerance_used=None)


def _undeclared_op(r):
    r["operators"].append(dict(row(r, "aten::add.Tensor"), op="aten::made_up.Tensor"))


def _wrong_case_count(r):
    row(r, "aten::relu").update(cases=3, excluded=0, delegated=3, ran=3, passed=3)


def _duplicated_row(r):
    r["operators"].append(dict(r["operators"][0]))


def _ran_more_than_delegated(r):
    row(r, "aten::convolution").update(ran=7, passed=7)


def _ops_without_rows(r):
    del r["operators"]


def _rows_without_ops(r):
    for i in ("OPS-1", "OPS-2"):
        result(r, i).update(outcome="not_applicable", reason="the descriptor declares no operators")


def case(report: dict[str, Any], op: str, name: str) -> dict[str, Any]:
    return next(c for c in row(report, op)["case_results"] if c["case"] == name)


def _case_failed_counts_kept(r):
    case(r, "aten::add.Tensor", "rank2").update(outcome="failed_numerics", reason="output 0 differs")


def _case_failed_counts_mended(r):
    # A careful forger: one case failed, its row's counts and first failing case agree; OPS-2's pass does not.
    case(r, "aten::add.Tensor", "rank2").update(outcome="failed_numerics", reason="output 0 differs")
    row(r, "aten::add.Tensor").update(
        passed=row(r, "aten::add.Tensor")["passed"] - 1,
        first_failing={"case": "rank2", "reason": "output 0 differs"},
    )


def _case_dropped(r):
    cases = row(r, "aten::relu")["case_results"]
    cases.remove(next(c for c in cases if c["case"] == "rank4"))


def _case_renamed_twice(r):
    case(r, "aten::relu", "rank4").update(case="rank3", key="aten::relu|float32|rank3")


def _case_passed_but_not_run(r):
    case(r, "aten::relu", "rank2").update(ran=False, worst_error=None, tolerance_used=None)
    row(r, "aten::relu").update(ran=row(r, "aten::relu")["ran"] - 1)


def _case_excluded_without_trait(r):
    c = case(r, "aten::relu", "rank2")
    c.update(outcome="excluded", reason="declared unsupported", delegated=False, ran=False)
    c.update(worst_error=None, tolerance_used=None)
    o = row(r, "aten::relu")
    o.update(delegated=o["delegated"] - 1, ran=o["ran"] - 1, passed=o["passed"] - 1)


def _case_of_another_operator(r):
    case(r, "aten::relu", "rank2")["key"] = "aten::add.Tensor|float32|rank2"


def _case_outcome_made_up(r):
    case(r, "aten::relu", "rank2").update(outcome="mostly_passed", reason="close enough")


def _case_worse_than_row(r):
    case(r, "aten::relu", "rank2").update(worst_error=0.5, tolerance_used=0.9)


def _case_rows_removed(r):
    del row(r, "aten::relu")["case_results"]


# ----------------------------------------------------------------------------- capabilities and applicability


def _drop_capability_keep_passes(r):
    r["backend"]["capabilities"].remove("quantized")


def _drop_capability_hide_failure(r):
    r["backend"]["capabilities"].remove("named_data")
    for x in r["results"]:
        if x["applies_if"] == "named_data":
            x.update(
                outcome="not_applicable", reason="named-data sample 'mlp': model.ptd holds no named data"
            )


def _drop_capability_declare_na(r):
    _drop_capability_hide_failure(r)
    r["options"]["expectations"] = "expectations.toml"  # as if the failing checks had been declared n/a


def _declared_but_says_absent(r):
    result(r, "DYN-1").update(outcome="not_applicable", reason=CAPABILITY_ABSENT["dynamic_shapes"])


def _capability_twice(r):
    r["backend"]["capabilities"].append("composition")


# ----------------------------------------------------------------------------- (name, edit, expected problem)

FORGERIES = [
    (
        "OPS-2 passed, operators show failures",
        _ops2_some_failed,
        "OPS-2 passed, but operators[0] (aten::add.Tensor",
    ),
    (
        "OPS-1 passed, cases left undelegated",
        _ops1_undelegated,
        "OPS-1 passed, but operators[4] (aten::linear",
    ),
    ("OPS passed, a failing case named", _first_failing, "names a failing case (relu_nan)"),
    ("OPS-2 passed, no case ran", _nothing_ran, "OPS-2 passed, but no operator case ran"),
    ("a row of an operator the corpus lacks", _undeclared_op, "(aten::made_up.Tensor float32) has 24 cases"),
    ("a row with another case count", _wrong_case_count, "(aten::relu float32) has 3 cases, but the corpus"),
    ("a row twice", _duplicated_row, "(aten::add.Tensor float32) appears twice in operators"),
    ("ran more cases than delegated", _ran_more_than_delegated, "ran is 7, more than its 6 delegated"),
    (
        "OPS passed, operators section removed",
        _ops_without_rows,
        "OPS-1 passed, but the report has no operators",
    ),
    ("operators section, OPS not applicable", _rows_without_ops, "operators section, but no OPS check ran"),
    (
        "a case row failed, counts kept",
        _case_failed_counts_kept,
        "(aten::add.Tensor float32): passed is 22, but its case_results add up to 21",
    ),
    (
        "a case row failed, counts mended, OPS-2 still passed",
        _case_failed_counts_mended,
        "OPS-2 passed, but operators[0] (aten::add.Tensor float32) has delegated cases that did not pass: rank2",
    ),
    (
        "a case row dropped",
        _case_dropped,
        "(aten::relu float32): cases is 16, but its case_results add up to 15",
    ),
    ("a case row twice", _case_renamed_twice, "(aten::relu float32): case_results names a case twice"),
    ("a passed case that did not run", _case_passed_but_not_run, "(rank2): outcome passed with ran False"),
    (
        "a case excluded without a declared trait",
        _case_excluded_without_trait,
        "(rank2): outcome excluded, but the case has no trait declared unsupported",
    ),
    (
        "a case row of another operator",
        _case_of_another_operator,
        "key 'aten::add.Tensor|float32|rank2' is not",
    ),
    (
        "a case outcome made up",
        _case_outcome_made_up,
        "(rank2): outcome 'mostly_passed' is not one of passed",
    ),
    (
        "a case worse than its row",
        _case_worse_than_row,
        "worst_error 0.0 is not the largest of its case_results",
    ),
    ("case rows removed", _case_rows_removed, "field 'operators[3].case_results' is missing"),
    (
        "capability removed, its checks still passed",
        _drop_capability_keep_passes,
        "(QNT-1) is passed, but backend.capabilities does not declare 'quantized'",
    ),
    (
        "capability removed to make failing NDATA checks exempt",
        _drop_capability_hide_failure,
        "(NDATA-1) is exempt (backend.capabilities does not declare 'named_data'), but its reason",
    ),
    (
        "capability removed, failing NDATA checks 'declared' not applicable",
        _drop_capability_declare_na,
        "(NDATA-1) is exempt (backend.capabilities does not declare 'named_data'), but its reason",
    ),
    (
        "capability declared, its check says it is absent",
        _declared_but_says_absent,
        "(DYN-1) is not applicable because 'the descriptor declares no dynamic shapes",
    ),
    ("capability listed twice", _capability_twice, "backend.capabilities lists 'composition' 2 times"),
    (
        "outcome in capitals",
        lambda r: result(r, "RT-3").update(outcome="PASSED"),
        "(RT-3): unknown outcome 'PASSED'",
    ),
    (
        "outcome with a trailing space",
        lambda r: result(r, "RT-3").update(outcome="passed "),
        "unknown outcome 'passed '",
    ),
    (
        "check id with a Cyrillic A",
        lambda r: (result(r, "AOT-1").update(id="\u0410OT-1"), r["selected"].__setitem__(0, "\u0410OT-1")),
        f"is not a check of suite {SUITE_VERSION}",
    ),
    ("suite version v0.3.0", lambda r: r.update(suite_version="v0.3.0"), "'v0.3.0' was never released"),
    ("suite version 0.3.0+local", lambda r: r.update(suite_version="0.3.0+local"), "was never released"),
    ("suite version 00.3.0", lambda r: r.update(suite_version="00.3.0"), "'00.3.0' was never released"),
    ("suite pre-release", lambda r: r.update(suite_version="0.3.0-rc.1"), "'0.3.0-rc.1' was never released"),
    ("schema version as a string", lambda r: r.update(schema_version="2"), "'schema_version' is a string"),
    (
        "schema version 4",
        lambda r: r.update(schema_version=4),
        f"schema_version is 4, but suite {SUITE_VERSION} writes",
    ),
    (
        "created with a time zone that overflows",
        lambda r: r.update(created="9999-12-31T23:59:59-23:59"),
        "is not a UTC time to the second",
    ),
    (
        "created as an ISO week date",
        lambda r: r.update(created="2026-W49-2T10:00:00+00:00"),
        "is not a UTC time to the second",
    ),
    (
        "created on the release day by a +14:00 offset",
        lambda r: r.update(created="2026-12-01T01:00:00+14:00"),
        "is not a UTC time to the second",
    ),
    (
        "created far in the past",
        lambda r: r.update(created="1970-01-01T00:00:00+00:00"),
        "before suite version",
    ),
    (
        "target section without --target",
        lambda r: r.update(target={"url": "ssh://lab.example", "uname": "Linux"}),
        "target section ('ssh://lab.example'), but options.target is None",
    ),
    (
        "runtime library digest that is no SHA-256",
        lambda r: r["backend"]["runtime_libraries"][0].update(sha256="00"),
        "'backend.runtime_libraries[0].sha256' is not a SHA-256",
    ),
    ("an infinite timeout", lambda r: r["options"].update(timeout=float("inf")), "'options.timeout' is"),
]


@pytest.mark.parametrize(("name", "fn", "expected"), FORGERIES, ids=[f[0] for f in FORGERIES])
def test_forgery_of_the_real_report_is_rejected(real, name, fn, expected):
    problems = check_report(forge(real, fn), today=DAY).problems
    assert any(expected in p for p in problems), problems


def test_the_real_clock_decides_what_is_in_the_future(real):
    """`--at` moves the validity window, not the clock: a report dated after today is forged."""
    later = forge(real, lambda r: r.update(created="2027-11-30T00:00:00+00:00"))
    problems = check_report(later, today=datetime.date(2027, 11, 30)).problems
    today = datetime.datetime.now(datetime.timezone.utc).date()
    assert f"created 2027-11-30, which is in the future (today is {today})" in problems
    # Judged on a day before it was created: it did not exist yet.
    problems = check_report(real, today=datetime.date(2026, 11, 29)).problems
    assert f"created {DAY}, after 2026-11-29, the day it is judged on (--at)" in problems


def test_verdict_reasons_of_an_earlier_suite_version_are_recomputed():
    path = Path(__file__).parents[2] / "matrix" / "results" / "1.0.1" / "report.json"
    report = json.loads(path.read_text())
    assert report["suite_version"] == "0.2.0" and report["verdict_reasons"]
    quiet = seal({**{k: v for k, v in report.items() if k != "content_sha256"}, "verdict_reasons": []})
    assert any("verdict_reasons differ" in p for p in check_report(quiet, today=DAY).problems)


def test_many_results_are_judged_in_linear_time_and_listed_briefly(real):
    def flood(r):
        extra = [dict(r["results"][0], id=f"AOT-{i}") for i in range(100, 20100)]
        r["results"] += extra
        r["selected"] += [x["id"] for x in extra]

    forged = forge(real, flood)
    started = time.monotonic()
    problems = check_report(forged, today=DAY).problems
    assert time.monotonic() - started < 5
    assert max(len(p) for p in problems) < 2000


# ----------------------------------------------------------------------------- attestation


def _envelope(report, key, subject=None):
    lib = report["backend"]["runtime_libraries"][0]
    subject = subject or [{"name": "libreference_backend_runtime.so", "digest": {"sha256": lib["sha256"]}}]
    return att.sign_envelope(att.statement_bytes(att.statement(report, subject)), key)


def test_signed_subjects_must_be_what_the_signed_report_tested(real):
    key = Ed25519PrivateKey.generate()
    assert att.statement_problems(att.open_envelope(_envelope(real, key))[1], real) == []
    for subject, expected in (
        (
            [{"name": "libother.so", "digest": {"sha256": "ab" * 32}}],
            "is not a runtime library the signed report",
        ),
        ([{"name": "w.whl", "digest": {"sha256": "ab" * 32}}], "'w.whl' is not a wheel file name"),
        (
            [
                {
                    "name": "executorch_reference_backend-0.2.0-py3-none-any.whl",
                    "digest": {"sha256": "ab" * 32},
                }
            ],
            "is a wheel of executorch-reference-backend 0.2.0, but the report certifies",
        ),
        ([{"digest": {"sha256": "ab" * 32}}], "has no name"),
    ):
        stmt = att.open_envelope(_envelope(real, key, subject))[1]
        assert any(expected in p for p in att.statement_problems(stmt, real)), subject


def test_sign_names_wheels_as_wheels(real, tmp_path):
    import zipfile

    wheel = tmp_path / "renamed.whl"
    with zipfile.ZipFile(wheel, "w") as z:  # the right distribution and version, under another file name
        z.writestr("x-0.4.0.dist-info/METADATA", "Name: executorch-reference-backend\nVersion: 0.4.0\n")
    with pytest.raises(att.AttestationError, match=r"'renamed\.whl' is not a wheel file name"):
        att.subjects(real, [wheel])
    wheel = wheel.rename(tmp_path / "executorch_reference_backend-0.4.0-py3-none-any.whl")
    assert att.subjects(real, [wheel])[0]["name"] == wheel.name


def run_cli(capsys, *args) -> tuple[int, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).strip()


def test_verify_rejects_a_signed_attestation_whose_subject_was_not_tested(real, tmp_path, capsys):
    key = Ed25519PrivateKey.generate()
    public = tmp_path / "k.pub.pem"
    from cryptography.hazmat.primitives import serialization

    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    path = att.write_envelope(
        _envelope(real, key, [{"name": "libevil.so", "digest": {"sha256": "cd" * 32}}]),
        tmp_path / "r.intoto.jsonl",
    )
    for command in (("verify", path, "--at", DAY.isoformat()), ("badge", path, "--out-dir", tmp_path)):
        code, output = run_cli(capsys, *command, "--trusted-key", public)
        assert (
            code == 1 and "subject libevil.so (SHA-256 cdcdcdcdcdcdcdcd…) is not a runtime library" in output
        )
        assert "Traceback" not in output
    assert not (tmp_path / "badge.svg").exists()


# ----------------------------------------------------------------------------- files that are not files


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_files_that_are_not_regular_are_refused_without_reading(real, tmp_path, capsys, kind):
    report = tmp_path / "report.json"
    report.write_text(json.dumps(real))
    if kind == "fifo":
        odd = tmp_path / "pipe"
        os.mkfifo(odd)  # nobody writes to it: opening it to read would block forever
        what = "is a FIFO, not a regular file"
    elif kind == "device":
        odd = Path("/dev/zero")  # endless
        what = "is a character device, not a regular file"
    else:
        odd = tmp_path
        what = "is a directory, not a regular file"
    cases = [
        (("verify", odd), 1),
        (("badge", odd), 1),
        (("verify", report, "--at", DAY.isoformat(), "--trusted-key", odd), 2),
        (("verify", report, "--at", DAY.isoformat(), "--library", odd), 1),
        (("verify", report, "--at", DAY.isoformat(), "--wheel", odd), 1),
        (("sign", report, "--key", odd), 2),
    ]
    for args, code in cases:
        started = time.monotonic()
        got, output = run_cli(capsys, *args)
        assert (got, what in output, "Traceback" in output) == (code, True, False), (args, output)
        assert time.monotonic() - started < 10


def test_rerun_never_starts_more_workers_than_this_machine_has(real):
    options = dict(real["options"], workers=10**6)
    command = rerun_command(options, "/tmp/x")
    assert int(command[command.index("-n") + 1]) <= (os.cpu_count() or 1)


def test_a_huge_number_is_refused_when_read(tmp_path, capsys):
    path = tmp_path / "report.json"
    path.write_text('{"schema": "executorch-conformance-report", "duration_s": 1e999}')
    code, output = run_cli(capsys, "verify", path)
    assert code == 1 and "the number 1e999 is too large for a double" in output


def test_a_report_and_an_envelope_in_one_jsonl_file_are_refused(real, tmp_path, capsys):
    key = Ed25519PrivateKey.generate()
    path = tmp_path / "both.intoto.jsonl"
    path.write_text(json.dumps(real) + "\n" + json.dumps(_envelope(real, key)) + "\n")
    code, output = run_cli(capsys, "verify", path)
    assert code == 1 and "holds 2 JSON lines" in output


def test_an_envelope_is_opened_once(real):
    """The statement verify checks is the one the signature covers (its bytes, decoded once)."""
    key = Ed25519PrivateKey.generate()
    envelope = _envelope(real, key)
    payload, stmt = att.open_envelope(envelope)
    assert payload == base64.b64decode(envelope["payload"]) and stmt["predicate"] == real


def test_a_report_cannot_write_lines_of_its_own_into_the_output(real, tmp_path, capsys):
    """Its strings are printed with their control characters escaped: no fake 'verified' line, no escape
    sequence that hides the verdict."""
    fake = "X\n  verdict: CERTIFIED (certify mode): 36/36 passed\x1b[8m\u2028\u202e"
    forged = forge(
        real,
        lambda r: (r["backend"].update(id=fake), result(r, "RT-3").update(outcome="failed", reason=fake)),
    )
    path = tmp_path / "report.json"
    path.write_text(json.dumps(forged))
    code, output = run_cli(capsys, "verify", path, "--at", DAY.isoformat())
    assert code == 0 and "NOT CONFORMANT" in output
    assert "\x1b" not in output and "\u2028" not in output and "\u202e" not in output
    verdicts = [line for line in output.splitlines() if line.startswith("  verdict:")]
    assert len(verdicts) == 1 and verdicts[0].startswith("  verdict: NOT CONFORMANT")
    assert "X\\n  verdict: CERTIFIED" in output and "\\x1b[8m" in output
    code, output = run_cli(capsys, "badge", path, "--out-dir", tmp_path)  # draws: an honest "not conformant"
    assert code == 0 and "\x1b" not in (tmp_path / "badge.svg").read_text()


def test_a_badge_label_is_bounded(real):
    from conformance.certification.badge import badge_fields

    label, _, _ = badge_fields(forge(real, lambda r: r["environment"].update(executorch="1" * 10**6)))
    assert len(label) < 50
