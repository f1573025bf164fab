"""The committed scoreboard: it is what the renderer makes of the committed results, every failure of a
real backend is triaged, every class (a) failure has a standalone reproducer; and the short form of the
scoreboard command (one backend, a few operators) runs and renders a row."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from scoreboard import render, run

REPO = Path(__file__).resolve().parents[2]


def test_the_committed_scoreboard_is_a_fresh_render_of_the_committed_results():
    proc = subprocess.run(
        [sys.executable, "-m", "scoreboard.render", "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr


def test_the_committed_rows_are_the_real_backends_with_every_check():
    board = {r.name: r for r in render.load_rows(run.RESULTS)}
    assert "xnnpack" in board
    for name in (n for n in ("xnnpack", "openvino") if n in board):
        row = board[name]
        assert row.real
        assert row.report["options"]["checks"] is None, "a scoreboard row runs every check"
        assert row.report["options"].get("models") == "all"
        assert row.run["command"].startswith(
            f"executorch-conformance run --backend {run.rows()[name]['backend']}"
        )
        assert len({o["op"] for o in row.report["operators"]}) >= 40
        assert "/work/" not in json.dumps(row.report)  # paths of the machine that made it are redacted


def test_every_failure_of_a_real_backend_is_triaged():
    board = render.load_rows(run.RESULTS)
    triage = render.load_triage()
    _table, untriaged = render.triage_rows(board, triage)
    assert untriaged == []
    # and every triage entry names a failure that is there (no stale entries)
    present = {(r.name, item) for r in board for item, _ in render.failures(r)}
    assert set(triage) <= present, sorted(set(triage) - present)


def test_every_backend_defect_has_a_standalone_reproducer():
    for (row, item), entry in render.load_triage().items():
        if entry["class"] != "a":
            continue
        script = REPO / entry["reproducer"]
        assert script.is_file(), (row, item, entry["reproducer"])
        tree = ast.parse(script.read_text())
        imported = {
            a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
        }
        imported |= {
            n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
        }
        assert not imported & {"conformance", "scoreboard", "backend_kit", "reference_backend"}, (
            script,
            imported,
        )


def test_a_malformed_triage_is_refused_naming_the_entry(tmp_path):
    bad = tmp_path / "triage.json"
    bad.write_text(
        json.dumps(
            {"entries": [{"row": "x", "item": "RT-3", "class": "a", "title": "t", "explanation": "e"}]}
        )
    )
    with pytest.raises(ValueError, match=r"entries\[0\] \(RT-3\) is class \(a\) without a reproducer"):
        render.load_triage(bad)
    bad.write_text(
        json.dumps(
            {"entries": [{"row": "x", "item": "RT-3", "class": "d", "title": "t", "explanation": "e"}]}
        )
    )
    with pytest.raises(ValueError, match=r"class 'd' is not one of a, b, c"):
        render.load_triage(bad)


#: The checks of the short form: what a real backend's row needs to show, without the slow runtime checks.
SHORT_CHECKS = "AOT-1,AOT-2,SER,RT-1,RT-3,RT-5,OPS"


@pytest.mark.full  # a real backend's run (XNNPACK's short form): the full tier, which CI runs
def test_the_short_form_runs_one_backend_and_renders_it_as_a_row(tmp_path):
    """What CI runs of the scoreboard command: XNNPACK with two operators, the checks of lowering,
    serialization, registration, numerics and version refusal (RT-5 through XNNPACK's incompatible_blobs),
    no model tier, then the renderer over those results (a descriptor given with --row is one more row)."""
    results = tmp_path / "results"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "scoreboard.run",
            "--row",
            "xnnpack-short=scoreboard.xnnpack.descriptor:DESCRIPTOR",
        ]
        + ["--ops", "aten::add.Tensor,aten::relu", "--checks", SHORT_CHECKS, "--no-models"]
        + ["--results", str(results)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    record = json.loads((results / "xnnpack-short" / "run.json").read_text())
    assert record["command"].startswith(
        "executorch-conformance run --backend scoreboard.xnnpack.descriptor:DESCRIPTOR"
    )
    assert record["wall_s"] > 0
    # XNNPACK refuses its own incompatible format with 0x30, in a line that names no runtime version
    report = json.loads((results / "xnnpack-short" / "report.json").read_text())
    rt5 = next(r for r in report["results"] if r["id"] == "RT-5")
    assert rt5["outcome"] == "failed" and "'XN02' != expected XN00 or XN01" in rt5["reason"], rt5
    out = tmp_path / "rendered"
    proc = subprocess.run(
        [sys.executable, "-m", "scoreboard.render", "--results", str(results), "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    text = (out / render.MARKDOWN).read_text()
    assert "| aten::add.Tensor float32 |" in text and "xnnpack-short" in text
    assert "<table>" in (out / render.PAGE).read_text()


def test_every_committed_junit_file_is_xml_and_names_no_path_of_this_machine():
    """junit.xml is kept with each row for CI tools to read; the paths redacted in it (``<repo>``, ``<venv>``,
    ``<tmp>``) must be written escaped, or the first one ends the document for every XML parser."""
    files = sorted(run.RESULTS.glob("*/junit.xml"))
    assert files
    for path in files:
        root = ElementTree.parse(path).getroot()  # noqa: S314  the committed files; a ParseError names line, column
        text = " ".join(filter(None, (v for e in root.iter() for v in (e.text, *e.attrib.values()))))
        assert str(REPO) not in text and sys.prefix not in text, path


def test_redacting_xml_writes_the_placeholders_escaped(tmp_path):
    message = f"failed at {REPO}/conformance/x.py and {sys.prefix}/lib/y.py in {tmp_path}/z"
    document = f'<testsuite><testcase name="a"><failure message="{message}">{message}</failure></testcase></testsuite>'
    redacted = run.redact(document, str(tmp_path), xml=True)
    failure = ElementTree.fromstring(redacted).find("testcase/failure")  # noqa: S314  made here
    expected = "failed at <repo>/conformance/x.py and <venv>/lib/y.py in <tmp>/z"
    assert failure is not None and failure.get("message") == expected and failure.text == expected
    assert run.redact(message, str(tmp_path)) == expected  # JSON text keeps them as they are


@pytest.mark.full
def test_a_full_row_run_again_gives_the_committed_outcomes(tmp_path):
    """The full tier: the OpenVINO row run again (minutes) gives the committed outcome of every check."""
    subprocess.run(
        [sys.executable, "-m", "scoreboard.run", "openvino", "--results", str(tmp_path)],
        cwd=REPO,
        check=True,
        timeout=7200,
    )
    fresh = json.loads((tmp_path / "openvino" / "report.json").read_text())
    committed = json.loads((run.RESULTS / "openvino" / "report.json").read_text())
    outcomes = {r["id"]: r["outcome"] for r in committed["results"]}
    assert {r["id"]: r["outcome"] for r in fresh["results"]} == outcomes


def test_every_committed_report_verifies():
    """What the scoreboard shows is what ``verify`` accepts: the XNNPACK and OpenVINO reports did not (an
    operator row whose worst error was infinite was written as None, while verify took the largest finite
    value of its cases), and nothing said so."""
    from conformance.certification.verify import verify_report

    for row in render.load_rows(run.RESULTS):
        assert verify_report(row.report) == [], row.name
