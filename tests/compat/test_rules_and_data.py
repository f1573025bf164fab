"""The data compat decides from: the reference backend's acceptance rules agree with its sources and
with the released runtimes' versions the grid used; the descriptor declares and validates them; the
shipped measured data is what the committed grid gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conformance.compat import load_rules
from conformance.compat.distill import distill
from conformance.compat.distill import main as distill_main
from conformance.descriptor_fields import problems

REPO = Path(__file__).resolve().parents[2]
RULES_PATH = REPO / "reference_backend" / "python" / "reference_backend" / "acceptance.json"


def test_the_current_runtimes_rules_are_its_sources_constants():
    from backend_kit.header import HEADER_FORMAT_VERSION
    from reference_backend.version import BLOB_FORMAT, BLOB_FORMAT_MINOR_MIN, __version__

    rule = load_rules(RULES_PATH).runtime(__version__)
    assert rule is not None, f"the rules declare no runtime {__version__}"
    assert rule.header_formats == (1, HEADER_FORMAT_VERSION)
    assert (rule.blob_format_major, rule.blob_format_minors) == (
        BLOB_FORMAT[0],
        (BLOB_FORMAT_MINOR_MIN, BLOB_FORMAT[1]),
    )
    assert rule.current_format_since == __version__ or rule.blob_format_minors[1] < BLOB_FORMAT[1]


def test_the_released_runtimes_rules_are_those_the_blob_grid_judged_with():
    from matrix.blob_verdicts import RUNTIMES

    rules = load_rules(RULES_PATH)
    for version, (newest_header, rt) in RUNTIMES.items():
        rule = rules.runtime(version)
        assert rule is not None, version
        assert rule.header_formats == (1, newest_header)
        assert rule.blob_format_minors == (rt.blob_format_minor_min, rt.blob_format_minor)
        assert rule.current_format_since == ".".join(map(str, rt.current_format_since))


def test_the_reference_descriptor_declares_its_packaged_rules():
    import reference_backend
    from reference_backend.conformance import DESCRIPTOR

    assert DESCRIPTOR.acceptance is not None
    assert Path(DESCRIPTOR.acceptance.path) == Path(reference_backend.__file__).with_name("acceptance.json")
    assert load_rules(DESCRIPTOR.acceptance.path).runtimes == load_rules(RULES_PATH).runtimes
    assert problems(DESCRIPTOR) == []


def test_a_descriptor_pointing_to_bad_rules_names_the_field(tmp_path):
    import dataclasses

    from conformance.descriptor import AcceptanceRulesFile
    from reference_backend.conformance import DESCRIPTOR

    bad = tmp_path / "rules.json"
    bad.write_text(json.dumps({"schema": 1, "backend_id": "ReferenceBackend"}))
    found = problems(dataclasses.replace(DESCRIPTOR, acceptance=AcceptanceRulesFile(str(bad))))
    assert (
        len(found) == 1
        and found[0].startswith("acceptance.path is not valid")
        and "'distribution'" in found[0]
    )
    found = problems(
        dataclasses.replace(DESCRIPTOR, acceptance=AcceptanceRulesFile(str(tmp_path / "none.json")))
    )
    assert found and "no such file" in found[0]


def test_the_shipped_measured_data_is_what_the_committed_grid_gives():
    assert distill_main(["--check"]) == 0, "run python -m conformance.compat.distill"


def test_a_refused_cell_makes_its_format_mixed_not_runs(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(
        REPO / "matrix" / "results" / "1.4.1", results / "1.4.1", ignore=lambda *_: ["report.html"]
    )
    grid_path = results / "1.4.1" / "grid.json"
    grid = json.loads(grid_path.read_text())
    cell = next(c for c in grid["programs"] if c["program"] == "xnnpack.pte")
    cell.update(status="refused", detail="RuntimeError: Failed to load method forward, error: 0x:30")
    grid_path.write_text(json.dumps(grid))
    measured = distill(results, REPO)["runtimes"]["1.4.1"]["builtin_backends"]["XnnpackBackend"]["XH00/XN01"]
    assert measured["status"] == "mixed"
