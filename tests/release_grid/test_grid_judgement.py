"""How the release grid judges one program and one cell, and what it refuses before it starts
(``conformance.release_grid``): real tensors through the same comparison every check uses."""

from __future__ import annotations

import sys

import pytest
import torch

from conformance.cli import main
from conformance.release_grid import cells, grid_cli, programs, releases
from conformance.vendor.records import pack

EXPECTED = [torch.tensor([1.0, 2.0, 3.0])]
PROGRAM = programs.Program("sample mlp", b"", pack(EXPECTED), pack(EXPECTED), 1e-5, 1e-5)
REFUSAL = (
    "[backend.cpp:160] ReferenceBackend: incompatible blob: header format 2, this runtime reads 1-1; "
    "runtime 0.3.0 for executorch 1.5.1 reads formats 1.0-1.3; fix: re-export with executorch-reference-backend==0.3.0"
)


def test_outputs_within_tolerance_run_and_outputs_outside_are_wrong():
    ran = cells.judge(PROGRAM, {"outputs": pack([torch.tensor([1.0, 2.0, 3.0])])}, "", "0.4.0")
    assert ran.kind == cells.RUNS
    wrong = cells.judge(PROGRAM, {"outputs": pack([torch.tensor([1.0, 2.0, 3.5])])}, "", "0.4.0")
    assert wrong.kind == cells.WRONG and "0.5" in wrong.detail


def test_a_refusal_needs_0x30_and_a_line_naming_the_runtimes_version():
    refused = cells.judge(
        PROGRAM, {"error": "Failed to load method forward, error: 0x:30"}, f"noise\n{REFUSAL}\n", "0.3.0"
    )
    assert refused.kind == cells.REFUSED and refused.detail == REFUSAL
    # the same line, judged as runtime 0.4.0's: it names another release
    unclear = cells.judge(PROGRAM, {"error": "error: 0x:30"}, REFUSAL, "0.4.0")
    assert unclear.kind == cells.REFUSED_UNCLEARLY and "0.4.0" in unclear.detail
    silent = cells.judge(PROGRAM, {"error": "error: 0x30"}, "", "0.3.0")
    assert silent.kind == cells.REFUSED_UNCLEARLY and "nothing logged" in silent.detail


def test_any_other_error_fails_and_quotes_what_the_runtime_logged():
    unknown = cells.judge(
        PROGRAM,
        {"error": "Failed to load method forward, error: 0x:23", "step": "load of sample mlp"},
        "ReferenceBackend: payload offset 96: unknown opcode 23",
        "0.4.0",
    )
    assert unknown.kind == cells.ERROR
    assert (
        "0x:23" in unknown.detail
        and "unknown opcode 23" in unknown.detail
        and "load of sample mlp" in unknown.detail
    )


def test_a_refusal_passes_a_cell_except_on_the_diagonal():
    refused = cells.Outcome("sample mlp", cells.REFUSED, REFUSAL)
    ran = cells.Outcome("aten::add.Tensor float32 (size1)", cells.RUNS)
    across = cells.Cell("0.4.0", "0.3.0", (refused, ran))
    assert across.passed and grid_cli.cell_text(across) == "runs 1, refused 1"
    own = cells.Cell("0.3.0", "0.3.0", (refused, ran))
    assert not own.passed and own.failures() == [refused]
    assert grid_cli.cell_text(own) == "FAILS: 1 refused"
    text = grid_cli.failures_text([own, across])
    assert (
        text.startswith("- blobs of 0.3.0 on its own runtime: sample mlp: refused:") and "0.4.0" not in text
    )


def test_the_table_has_a_row_per_writer_and_a_column_per_runtime():
    ran = (cells.Outcome("p", cells.RUNS),)
    bad = (cells.Outcome("p", cells.ERROR, "0x23"),)
    found = [
        cells.Cell("0.1", "0.1", ran),
        cells.Cell("0.1", "0.2", ran),
        cells.Cell("0.2", "0.1", bad),
        cells.Cell("0.2", "0.2", ran),
    ]
    lines = grid_cli.table(["0.1", "0.2"], found).splitlines()
    assert lines[0].split() == ["blobs", "of", "\\", "runtime", "0.1", "0.2"]
    assert lines[1].split() == ["0.1", "runs", "1", "runs", "1"]
    assert lines[2].split() == ["0.2", "FAILS:", "1", "error", "runs", "1"]


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        (["0.4.0"], "give LABEL=PYTHON"),
        (["=/usr/bin/python3"], "give LABEL=PYTHON"),
        ([f"0.4.0={sys.executable}", f"0.4.0={sys.executable}"], "release '0.4.0' is given twice"),
        ([f"0.4.0={sys.executable}"], "at least two releases"),
        (["0.4.0=/no/such/python", f"0.5.0={sys.executable}"], "/no/such/python does not exist"),
    ],
)
def test_bad_release_arguments_are_refused_with_the_reason(arguments, fragment):
    with pytest.raises(releases.ReleaseGridError, match=fragment.replace("\\", "\\\\").replace("(", r"\(")):
        releases.parse(arguments)


def test_the_command_refuses_bad_arguments_in_one_line_with_exit_2(capsys):
    code = main(
        [
            "release-grid",
            "--backend",
            "ReferenceBackend",
            "--release",
            "0.4.0=/no/such/python",
            "--release",
            f"x={sys.executable}",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "--release '0.4.0=/no/such/python'" in err and "does not exist" in err


def test_a_quoted_log_line_is_the_runtimes_own_not_a_library_warning():
    warning = (
        "/usr/lib/python3.11/copyreg.py:105: FutureWarning: `isinstance(treespec, LeafSpec)` is deprecated",
        "  return cls.__new__(cls, *args)",
    )
    log = "\n".join([*warning, *warning, "ReferenceBackend: payload offset 96: unknown opcode 23", *warning])
    unknown = cells.judge(PROGRAM, {"error": "error: 0x:23"}, log, "0.4.0")
    assert unknown.detail.endswith(
        "the runtime logged: ReferenceBackend: payload offset 96: unknown opcode 23"
    )
