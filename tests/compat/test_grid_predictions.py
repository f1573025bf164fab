"""The prediction equals the measurement for every cell of the committed release grid
(matrix/results/<release>/grid.json): golden programs x runtimes, and reference blobs x reference
runtime versions; where nothing was measured or declared, the prediction is unknown."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from packaging.version import Version

from conformance.compat import REFUSED, RUNS, UNKNOWN, load_rules, predict

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "matrix" / "results"
GOLDEN = REPO / "tests" / "golden"
RULES = load_rules(REPO / "reference_backend" / "python" / "reference_backend" / "acceptance.json")
#: What the grid recorded -> what compat must say.
MEASURED = {"runs and matches": RUNS, "refused": REFUSED}
_RUNTIME_LINE = re.compile(r"runtime (\d+\.\d+\.\d+) for executorch")


def _grids() -> list[tuple[str, dict]]:
    found = sorted(RESULTS.glob("*/grid.json"), key=lambda p: Version(p.parent.name))
    return [
        (
            str(Version(json.loads(p.read_text())["runtime"]["executorch"]).base_version),
            json.loads(p.read_text()),
        )
        for p in found
    ]


GRIDS = _grids()
PROGRAM_CELLS = [(rt, cell) for rt, grid in GRIDS for cell in grid["programs"] if cell["status"] != "not run"]
BLOB_CELLS = [(rt, cell) for rt, grid in GRIDS for cell in grid["blobs"] if cell["status"] != "not run"]
BLOB_PATHS = {
    e["name"]: REPO / e["path"] for e in json.loads((GOLDEN / "blobs" / "blobs.json").read_text())["blobs"]
}


def _backend_line(cell: dict) -> str | None:
    """The reference runtime's own line in the cell's log, without ExecuTorch's [file:line] prefix."""
    for line in cell["log"]:
        text = re.sub(r"^\[[^\]]+\]\s*", "", line)
        if text.startswith("ReferenceBackend: "):
            return text
    return None


def test_the_grid_has_cells_to_validate():
    assert len(GRIDS) >= 7 and len(PROGRAM_CELLS) >= 90 and len(BLOB_CELLS) >= 20


@pytest.mark.parametrize(
    ("runtime", "cell"),
    PROGRAM_CELLS,
    ids=[f"on {rt}: {c['exported_with']}/{c['program']}" for rt, c in PROGRAM_CELLS],
)
def test_program_cell_is_predicted(runtime, cell):
    program = GOLDEN / cell["exported_with"] / cell["program"]
    expected = MEASURED[cell["status"]]
    if cell["program"] == "xnnpack.pte":
        versions = [None]
    else:
        # The reference runtime version the cell ran is in its log line; a cell whose log does not name it
        # must be predicted alike for every declared version.
        line = _backend_line(cell)
        named = _RUNTIME_LINE.search(line or "")
        versions = [named.group(1)] if named else RULES.versions()
    for version in versions:
        backends = ["XnnpackBackend"] if version is None else [f"ReferenceBackend=={version}"]
        prediction = predict(program, runtime, backends, [RULES])
        assert prediction.status == expected, (version, prediction.to_json(), cell)
        delegate = prediction.answers[1]
        if expected == REFUSED:
            code = re.search(r"0x:?\w+", cell["detail"]).group(0)
            assert delegate.status == REFUSED and code in delegate.error, (delegate, cell["detail"])
        line = _backend_line(cell)
        if line and expected == RUNS:
            assert delegate.log == line  # the very line the runtime logged


@pytest.mark.parametrize(
    ("runtime", "cell"),
    BLOB_CELLS,
    ids=[f"on {rt}: {c['blob']} on runtime {c['runtime']}" for rt, c in BLOB_CELLS],
)
def test_blob_cell_is_predicted(runtime, cell):
    prediction = predict(BLOB_PATHS[cell["blob"]], runtime, [f"ReferenceBackend=={cell['runtime']}"], [RULES])
    delegate = prediction.answers[1]
    assert delegate.status == MEASURED[cell["status"]], (delegate, cell)
    line = _backend_line(cell)
    if cell["observed"] == "compatible":
        assert line is None and delegate.log is None
    else:
        assert delegate.log == line, (delegate, cell["log"])
    if delegate.status == REFUSED:
        assert "0x:30" in delegate.error and delegate.fix and delegate.fix in line


@pytest.mark.parametrize("program", sorted(GOLDEN.glob("*/*.pte")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_cells_without_a_basis_are_unknown(program):
    backend = "XnnpackBackend" if program.name == "xnnpack.pte" else "ReferenceBackend==0.3.0"
    for runtime in ("1.6.0", "2.0.0"):  # no grid column, outside every declared range
        answers = predict(program, runtime, [backend], [RULES]).answers
        assert [a.status for a in answers] == [UNKNOWN, UNKNOWN], answers
    if program.name == "reference.pte":
        answers = predict(
            program, "1.4.1", ["ReferenceBackend==0.9.0"], [RULES]
        ).answers  # a runtime not declared
        assert answers[1].status == UNKNOWN and "not 0.9.0" in answers[1].why
