"""The grid (exported-with x run-on), the blob grid and the torch axis render
from the committed results; broken results give one clear line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from matrix.blob_verdicts import RUNTIMES, expected_verdict, observed_verdict
from matrix.grid_render import GridError, load, markdown, short
from matrix.releases import RELEASES

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "matrix" / "results"
BLOBS = json.loads((ROOT / "tests" / "golden" / "blobs" / "blobs.json").read_text())


def _grid(release: str) -> dict:
    return json.loads((RESULTS / release / "grid.json").read_text())


def test_every_release_has_a_committed_grid_row_with_a_command_per_cell():
    grids = load(RESULTS)
    assert set(grids.by_release) == {r.executorch for r in RELEASES}
    goldens = sorted(p.parent.name for p in (ROOT / "tests" / "golden").glob("*/manifest.json"))
    for release, grid in grids.by_release.items():
        assert grid["runtime"]["executorch"].split("+")[0] == release
        cells = {(c["exported_with"], c["program"]) for c in grid["programs"]}
        assert cells == {(g, f) for g in goldens for f in ("reference.pte", "xnnpack.pte")}, release
        for cell in grid["programs"]:
            assert cell["status"] in (
                "runs and matches",
                "refused",
                "wrong output",
                "crashed",
                "hung",
                "not run",
                "library not loaded",
            ), cell
            if cell["status"] != "not run":
                assert cell["command"].startswith("python -m matrix.grid_case tests/golden/"), cell
                assert cell["program"] in cell["command"]


def test_the_newest_runtime_runs_every_golden():
    """ExecuTorch promises a .pte loads on at least the next minor runtime; 1.5.1 runs all of them."""
    for cell in _grid("1.5.1")["programs"]:
        assert cell["status"] == "runs and matches", cell
        assert cell["max_deviation"] <= 1e-5


def test_old_runtime_rows_are_measured_not_declared():
    """1.1.0 and 1.2.0: a library built against 1.3.1's headers runs the goldens; 1.0.1: it is refused."""
    for release in ("1.1.0", "1.2.0"):
        grid = _grid(release)
        assert "1.3.1's include/" in grid["runtime"]["reference_library_how"]
        assert all(c["status"] == "runs and matches" for c in grid["programs"]), release
    refused = [c for c in _grid("1.0.1")["programs"] if c["program"] == "reference.pte"]
    assert refused and all(c["status"] == "refused" for c in refused)
    assert any("ReferenceBackend: invalid blob" in line for line in refused[0]["log"])
    report = json.loads((RESULTS / "1.0.1" / "report.json").read_text())
    rt = [r for r in report["results"] if r["id"].startswith("RT-")]
    assert rt and all(
        r["outcome"] == "not_applicable" and "golden program is refused" in r["reason"] for r in rt
    )


def test_blob_grid_agrees_with_the_verdict_table():
    cells = _grid("1.5.1")["blobs"]
    assert {c["runtime"] for c in cells} == set(RUNTIMES)
    assert {c["blob"] for c in cells} == {b["name"] for b in BLOBS["blobs"]}
    for cell in cells:
        assert cell["status"] != "not run", cell
        assert cell["agrees"], cell
        assert observed_verdict(cell) == cell["observed"]


def test_expected_verdicts_follow_the_rules():
    by_name = {b["name"]: ROOT / b["path"] for b in BLOBS["blobs"]}
    old = next(p for n, p in by_name.items() if n.startswith("0.1.0"))
    default = next(p for n, p in by_name.items() if "default" in n)
    assert expected_verdict(old, "0.1.0")["verdict"] == "compatible"
    assert expected_verdict(old, "0.2.0")["verdict"] == "compatible, re-export recommended"
    assert expected_verdict(default, "0.1.0") == {
        "verdict": "incompatible",
        "rule": "3: header format 2, runtime 0.1.0 reads 1-1",
    }
    assert expected_verdict(default, "0.2.0")["verdict"] == "compatible"


def test_released_runtime_table_matches_the_current_sources():
    from reference_backend import version

    newest_header, rt = RUNTIMES[version.__version__]
    assert (rt.blob_format_major, rt.blob_format_minor) == version.BLOB_FORMAT
    assert rt.blob_format_minor_min == version.BLOB_FORMAT_MINOR_MIN and newest_header == 2


def test_markdown_shows_the_grid_with_dates_and_commands():
    text = "\n".join(markdown(load(RESULTS)))
    assert "| exported with | program | on 1.0.1 |" in text and "| 1.5.1 | xnnpack.pte |" in text
    for r in RELEASES:
        assert f"- on {r.executorch}: `tox -e et{r.executorch.replace('.', '')}`" in text
        assert _grid(r.executorch)["created"] in text
    assert "## Blob grid" in text and "(as the table says)" in text
    assert "## The torch axis" in text


def test_committed_readme_holds_the_rendered_grid():
    committed = (ROOT / "matrix" / "README.md").read_text()
    rendered = markdown(load(RESULTS))
    grid_lines = [line for line in rendered if line.startswith("| ")]
    assert grid_lines and all(line in committed for line in grid_lines)


def test_short_names_the_outcome():
    assert short({"status": "runs and matches", "detail": ""}) == "runs, matches"
    assert short({"status": "refused", "detail": "RuntimeError: ... error: 0x:23"}) == "refused 0x:23"
    assert short({"status": "crashed", "detail": "crashed with SIGSEGV"}) == "crashed with SIGSEGV"


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{not json", "not JSON (line 1"),
        ('{"runtime": {}}', "no created, programs"),
        (
            '{"runtime": {}, "created": "x", "programs": [{"status": "refused"}]}',
            "cell 0 has no detail, command",
        ),
    ],
)
def test_broken_grid_file_is_one_clear_error(tmp_path, content, said):
    shutil.copytree(RESULTS, tmp_path / "results")
    (tmp_path / "results" / "1.4.1" / "grid.json").write_text(content)
    with pytest.raises(GridError) as err:
        load(tmp_path / "results")
    assert said in str(err.value) and "1.4.1/grid.json" in str(err.value) and "tox -e et141" in str(err.value)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "matrix",
            "render",
            "--no-abi",
            "--results",
            str(tmp_path / "results"),
            "--out",
            str(tmp_path / "README.md"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "Traceback" not in proc.stderr


def test_missing_grid_file_is_a_not_run_column(tmp_path):
    shutil.copytree(RESULTS, tmp_path / "results")
    (tmp_path / "results" / "1.3.1" / "grid.json").unlink()
    text = "\n".join(markdown(load(tmp_path / "results")))
    assert "- on 1.3.1: not run (no results/1.3.1/grid.json; run `tox -e et131`)" in text
