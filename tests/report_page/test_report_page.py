"""The HTML results page of a run and of the release matrix: content, self-containment,
and what a real headless Chromium shows (DOM and a screenshot)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conformance.checks import all_checks
from conformance.report import seal
from conformance.results.html_report import render_page, write_page

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "matrix" / "results"

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Any name lookup fails: a page that tried to fetch something would show it.
    "--host-resolver-rules=MAP * ~NOTFOUND",
]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    return None


def run_chromium(page: Path, *mode: str) -> subprocess.CompletedProcess:
    browser = _chromium()
    if browser is None:
        pytest.skip(
            "no Chromium found (chromium, chromium-browser or google-chrome on PATH); "
            ".ci/run installs Debian's chromium"
        )
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *mode, page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
        )


class Dom(HTMLParser):
    """Text by element id, and every table row as a list of cell texts."""

    def __init__(self, markup: str):
        super().__init__()
        self.by_id: dict[str, str] = {}
        self.rows: list[list[str]] = []
        self.tags: list[tuple[str, dict]] = []
        self._open: list[tuple[str, str | None]] = []
        self._texts: dict[str, list[str]] = {}
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.feed(markup)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag in ("meta", "br", "img", "link", "input"):
            return
        self._open.append((tag, attrs.get("id")))
        if attrs.get("id"):
            self._texts[attrs["id"]] = []
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        while self._open:
            t, element_id = self._open.pop()
            if element_id:
                self.by_id[element_id] = " ".join("".join(self._texts.pop(element_id)).split())
            if t == tag:
                break
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        for texts in self._texts.values():
            texts.append(data)
        if self._cell is not None:
            self._cell.append(data)


def sample_report() -> dict:
    """A real report's shape: every check, one failing with markup in its reason, operators and logs."""
    results = [
        {
            "id": c.id,
            "clause": c.clause,
            "level": c.level,
            "title": c.title,
            "applies_if": c.applies_if,
            "outcome": "passed",
            "reason": "",
            "duration_s": 0.01,
        }
        for c in all_checks()
    ]
    rt3 = next(r for r in results if r["id"] == "RT-3")
    rt3.update(
        outcome="failed",
        reason="sample 'mlp' output 0 differs: <script>alert(1)</script> & more",
        log=["E reference_backend: blob format 9.0 is newer than 1.x", "I second line"],
    )
    report = {
        "schema": "executorch-conformance-report",
        "schema_version": 2,
        "suite_version": "0.3.0",
        "created": "2026-12-01T10:00:00+00:00",
        "command": "executorch-conformance run --backend X",
        "mode": "standard",
        "options": {"backend": "X", "certify": False, "checks": None},
        "environment": {
            "executorch": "1.5.1",
            "torch": "2.13.0+cpu",
            "python": "3.11.7",
            "platform": "Linux",
            "machine": "x86_64",
        },
        "backend": {
            "id": "VendorBackend",
            "distribution": "vendor-backend",
            "version": "1.0.0",
            "installed_version": "1.0.0",
            "capabilities": [],
            "runtime_libraries": [{"path": "/x/libvendor.so", "sha256": "ab" * 32}],
        },
        "selected": [r["id"] for r in results],
        "results": results,
        "summary": {"passed": len(results) - 1, "failed": 1, "total": len(results)},
        "operators": [
            {
                "op": "aten::add.Tensor",
                "dtype": "float32",
                "cases": 12,
                "excluded": 0,
                "delegated": 12,
                "ran": 12,
                "passed": 12,
                "worst_error": 0.0,
                "tolerance_used": 0.0,
                "first_failing": None,
            },
            {
                "op": "aten::mm",
                "dtype": "float16",
                "cases": 8,
                "excluded": 0,
                "delegated": 8,
                "ran": 6,
                "passed": 5,
                "worst_error": 0.0123,
                "tolerance_used": 3.1,
                "first_failing": {"case": "empty_k", "reason": "shape (3, 0) x (0, 4): output differs"},
                "case_results": [
                    {
                        "case": "empty_k",
                        "outcome": "failed_numerics",
                        "reason": "shape (3, 0) x (0, 4): output differs",
                    },
                    {"case": "square", "outcome": "passed", "reason": None},
                    {
                        "case": "wide",
                        "outcome": "crashed",
                        "reason": "crashed with SIGSEGV in execute of <b>",
                    },
                ],
            },
        ],
        "runtime_log": "I loaded libvendor.so",
        "interrupted": False,
        "verdict": "not conformant",
        "verdict_reasons": ["RT-3 failed: sample 'mlp' output 0 differs"],
        "warnings": [],
        "certified": False,
        "duration_s": 3.2,
    }
    return seal(report)


def test_page_holds_verdict_results_operators_logs_and_environment():
    markup = render_page(sample_report())
    dom = Dom(markup)
    assert dom.by_id["verdict"] == "not conformant"
    assert "RT-3 failed" in dom.by_id["verdict-reasons"]
    rows = {r[0]: r for r in dom.rows if r and r[0] in {c.id for c in all_checks()}}
    assert set(rows) == {c.id for c in all_checks()}
    assert rows["RT-3"][3] == "FAIL" and "<script>alert(1)</script> & more" in rows["RT-3"][-1]
    assert rows["AOT-1"][3] == "PASS"
    ops = {r[0]: r for r in dom.rows if r and r[0].startswith("aten::") and len(r) == 7}
    assert ops["aten::mm"][1:5] == ["float16", "8", "8", "5/6"] and "output differs" in ops["aten::mm"][6]
    assert (
        "2 declared operator and dtype pairs; of the 2 with corpus cases, 1 pass every delegated case, 1 fail."
        in markup
    )
    cases = [r for r in dom.rows if r and r[0] == "aten::mm" and len(r) == 5]
    assert [r[2:4] for r in cases] == [["empty_k", "failed_numerics"], ["wide", "crashed"]], cases
    assert "execute of &lt;b&gt;" in markup
    assert "blob format 9.0 is newer" in dom.by_id["logs"] and "I loaded libvendor.so" in dom.by_id["logs"]
    assert "2.13.0+cpu" in dom.by_id["environment"] and "/x/libvendor.so" in dom.by_id["backend"]
    assert "(matches)" in markup


def test_page_escapes_the_report_and_loads_nothing():
    markup = render_page(sample_report())
    assert "<script" not in markup.lower() and "&lt;script&gt;" in markup
    dom = Dom(markup)
    for tag, attrs in dom.tags:
        assert tag not in ("script", "link", "img", "iframe", "object"), tag
        for name in ("src", "href"):
            assert name not in attrs or not attrs[name].startswith(("http:", "https:", "//")), (tag, attrs)
    assert "url(" not in markup and "@import" not in markup
    assert any(
        a.get("http-equiv") == "Content-Security-Policy" and "default-src 'none'" in a.get("content", "")
        for t, a in dom.tags
        if t == "meta"
    )


def test_an_edited_report_is_shown_as_edited_and_a_partial_one_still_renders():
    report = sample_report()
    report["verdict"] = "certified"
    assert "does NOT match" in render_page(report)
    for partial in ({}, {"results": "nope", "backend": 3}, {"results": [1, {"id": "AOT-1"}]}, []):
        assert render_page(partial).startswith("<!DOCTYPE html>")


def test_page_command_writes_the_page_and_refuses_what_is_not_a_report(tmp_path):
    report_path = tmp_path / "report.json"
    report_path.write_text(json.dumps(sample_report()))
    cli = [sys.executable, "-m", "conformance.cli", "page"]
    proc = subprocess.run([*cli, str(report_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")
    bad = {"list.json": "[1, 2]", "empty.json": "{}", "text.json": "not json", "bin.json": b"\xff\xfe\x00"}
    for name, content in bad.items():
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        proc = subprocess.run([*cli, str(path)], capture_output=True, text=True)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (name, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and name in proc.stderr, proc.stderr
    proc = subprocess.run([*cli, str(tmp_path / "missing.json")], capture_output=True, text=True)
    assert proc.returncode == 2 and "missing.json" in proc.stderr and "Traceback" not in proc.stderr


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_chromium_renders_the_run_page(tmp_path):
    page = write_page(sample_report(), tmp_path / "report.html")
    proc = run_chromium(page, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = Dom(proc.stdout)
    assert dom.by_id["verdict"] == "not conformant"
    assert sum(1 for r in dom.rows if r and r[0] in {c.id for c in all_checks()}) == len(all_checks())
    assert "aten::mm" in dom.by_id["operator-table"]
    shot = tmp_path / "report.png"
    proc = run_chromium(page, f"--screenshot={shot}", "--window-size=1280,2000")
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    assert _png_size(shot) == (1280, 2000)
    assert shot.stat().st_size > 30_000, "the screenshot is nearly empty"  # a blank page is a few KB


def test_chromium_renders_the_release_matrix_page(tmp_path):
    html_out = tmp_path / "matrix.html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "matrix",
            "render",
            "--no-abi",
            "--results",
            str(RESULTS),
            "--out",
            str(tmp_path / "README.md"),
            "--html",
            str(html_out),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    markup = html_out.read_text()
    assert "<img" not in markup and "<svg" in markup  # badges inlined
    proc = run_chromium(html_out, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = Dom(proc.stdout)
    from matrix.releases import RELEASES

    for rel in RELEASES:
        assert dom.by_id[f"release-{rel.executorch}"].startswith(rel.executorch)
    assert "pass (binary compatible)" in dom.by_id["release-1.5.1"]
    # The grid, the blob grid and the torch axis, each cell titled with its command.
    assert "runs, matches" in dom.by_id["grid"] and "as the table says" in dom.by_id["blob-grid"]
    assert "torch-axis" in dom.by_id and 'title="python -m matrix.grid_case tests/golden/' in markup
    # The links to each release's report are relative to the page, wherever it was written.
    for tag, attrs in Dom(markup).tags:
        if tag == "a":
            assert (html_out.parent / attrs["href"]).resolve().exists(), attrs["href"]
    shot = tmp_path / "matrix.png"
    proc = run_chromium(html_out, f"--screenshot={shot}", "--window-size=1280,2000")
    assert proc.returncode == 0 and shot.exists() and shot.stat().st_size > 20_000, proc.stderr[-2000:]


def test_matrix_render_answers_bad_places_in_one_line(tmp_path):
    cli = [sys.executable, "-m", "conformance.cli", "matrix", "render", "--no-abi"]
    proc = subprocess.run(
        [*cli, "--results", str(tmp_path), "--out", str(tmp_path / "R.md")], capture_output=True, text=True
    )
    assert (
        proc.returncode == 2 and "holds no release results" in proc.stderr and "Traceback" not in proc.stderr
    )
    proc = subprocess.run(
        [*cli, "--results", str(RESULTS), "--out", str(tmp_path / "no" / "such" / "dir" / "R.md")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
