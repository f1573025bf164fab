"""Each profile's verdict, and what a report certifies, on the terminal, the HTML page and in Markdown:
from the report's ``profiles``, or computed from the results of a report written before profiles."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from test_report_page import Dom

from conformance.report import profile_verdicts, verdict
from conformance.results.html_report import render_page
from conformance.results.summary_text import markdown_summary, summary_lines, verdict_lines

REPO = Path(__file__).resolve().parents[2]
BEFORE_PROFILES = REPO / "tests" / "certification" / "data" / "reference-certify-0.5.0.json"


@pytest.fixture(scope="module")
def old() -> dict:
    data = json.loads(BEFORE_PROFILES.read_text())
    assert "profiles" not in data and data["mode"] == "certify"
    return data


def without_header(report: dict) -> dict:
    """``report`` with BLOB-1 failed (as a backend that writes no contract header), verdict and profiles
    recomputed as the suite writes them."""
    changed = copy.deepcopy(report)
    next(r for r in changed["results"] if r["id"] == "BLOB-1").update(outcome="failed", reason="no ECVH")
    capabilities = changed["backend"]["capabilities"]
    text, reasons, warnings = verdict(changed["results"], True, capabilities)
    changed.update(verdict=text, verdict_reasons=reasons, warnings=warnings, certified=False)
    changed["profiles"] = profile_verdicts(changed["results"], True, capabilities)
    return changed


def test_the_terminal_shows_each_profile_and_what_the_report_certifies(old):
    lines = summary_lines(without_header(old), 200)
    at = lines.index("profiles:")
    assert lines[at + 1].split()[:3] == ["profile", "verdict", "checks"]
    blobs = next(line for line in lines[at:] if line.startswith("Versioned blobs"))
    assert "not conformant" in blobs and "BLOB-1 failed: no ECVH" in blobs
    assert verdict_lines(without_header(old))[-1] == (
        "certifies: Core + Named data + Quantized + Dynamic shapes + Composition"
    )


def test_a_report_before_profiles_gets_them_computed_and_says_so(old):
    lines = summary_lines(old, 200)
    assert "profiles (computed from the results):" in lines
    assert verdict_lines(old)[-1] == (
        "certifies: Core + Versioned blobs + Named data + Quantized + Dynamic shapes + Composition"
    )
    markup = render_page(old)
    assert "The report predates profiles (suite 0.6.0): computed from its results." in markup


def test_without_core_nothing_is_certified_and_a_standard_run_certifies_nothing(old):
    broken = copy.deepcopy(old)
    next(r for r in broken["results"] if r["id"] == "RT-3").update(outcome="failed", reason="off")
    assert verdict_lines(broken)[-1] == "certifies: no profile (Core is not certified)"
    assert verdict_lines({**old, "mode": "standard"})[-1] == "certifies: nothing (standard mode)"


def test_the_page_shows_the_profiles_table_with_states(old):
    markup = render_page(without_header(old))
    dom = Dom(markup)
    assert dom.by_id["certifies"] == "certifies: Core + Named data + Quantized + Dynamic shapes + Composition"
    rows = {row[0]: row for row in dom.rows if row and row[0] in ("Core", "Versioned blobs")}
    assert rows["Core"][1] == "certified"
    assert rows["Versioned blobs"][1:] == ["not conformant", "3", "BLOB-1 failed: no ECVH"]
    assert 'data-state="bad"><td title="every blob carries the contract header' in markup
    assert "predates profiles" not in markup


def test_markdown_lists_the_profiles(old):
    text = markdown_summary(without_header(old))
    assert "| Versioned blobs | not conformant | 3 | BLOB-1 failed: no ECVH |" in text


def test_the_views_survive_profiles_of_the_wrong_shape(old):
    for bad in (5, [7, None], [{"name": 3, "verdict": "certified", "id": "core"}]):
        assert "<table" in render_page({**old, "profiles": bad})
        assert "verdict" in markdown_summary({**old, "profiles": bad})
    assert 'id="profiles"' not in render_page({"results": "nonsense", "mode": "certify"})
