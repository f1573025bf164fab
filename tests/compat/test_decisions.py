"""The decision on programs the grid never ran: forged blob versions, a backend the device lacks,
operators and exporters nothing measured, blobs whose format cannot be told; the JSON form and the
exit codes of the command."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.compat import REFUSED, RUNS, UNKNOWN, load_rules, predict, read_program
from conformance.inspection.forge import replace_delegate_data, with_header_fields
from conformance.pte import read_pte

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "1.5.1"
RULES_PATH = REPO / "reference_backend" / "python" / "reference_backend" / "acceptance.json"
RULES = load_rules(RULES_PATH)


def _forged(tmp_path: Path, **fields) -> Path:
    """The 1.5.1 reference golden with its blob's header fields rewritten."""
    data = (GOLDEN / "reference.pte").read_bytes()
    delegate = read_pte(data).delegates()[0]
    path = tmp_path / "forged.pte"
    path.write_bytes(
        replace_delegate_data(data, delegate, with_header_fields(bytes(delegate.data), **fields))
    )
    return path


def test_a_newer_blob_format_is_refused_with_the_runtimes_line_and_fix(tmp_path):
    program = _forged(tmp_path, blob_format=(1, 4), backend_version=(0, 4, 0))
    answer = predict(program, "1.5.1", ["ReferenceBackend==0.3.0"], [RULES]).answers[1]
    assert answer.status == REFUSED
    assert answer.error == "Failed to load method forward, error: 0x:30"
    assert answer.log == (
        "ReferenceBackend: incompatible blob: format 1.4, written by 0.4.0 with executorch 1.5.1; runtime 0.3.0 "
        "for executorch 1.5.1 reads formats 1.0-1.3; fix: use a runtime from executorch-reference-backend>=0.4.0, "
        "or re-export with 0.3.0"
    )
    assert answer.fix == "use a runtime from executorch-reference-backend>=0.4.0, or re-export with 0.3.0"


def test_a_header_format_the_runtime_does_not_read_is_refused(tmp_path):
    program = _forged(tmp_path, header_format=2)
    answer = predict(program, "1.5.0", ["ReferenceBackend==0.1.0"], [RULES]).answers[1]
    assert answer.status == REFUSED and "header format 2, this runtime reads 1-1" in answer.log
    assert answer.fix == "re-export with executorch-reference-backend==0.1.0"
    assert predict(program, "1.5.0", ["ReferenceBackend==0.2.0"], [RULES]).status == RUNS


def test_a_blob_without_a_contract_header_is_refused_as_invalid(tmp_path):
    data = bytearray((GOLDEN / "reference.pte").read_bytes())
    delegate = read_pte(bytes(data)).delegates()[0]
    data[delegate.data_offset : delegate.data_offset + 4] = b"XXXX"
    program = tmp_path / "damaged.pte"
    program.write_bytes(bytes(data))
    answer = predict(program, "1.5.1", ["ReferenceBackend==0.3.0"], [RULES]).answers[1]
    assert answer.status == REFUSED and answer.error.endswith("0x:23")
    assert "invalid blob: wrong magic 'XXXX'" in answer.log and "export the program again" in answer.fix


def test_a_delegate_whose_backend_the_device_lacks_is_refused_not_registered():
    prediction = predict(GOLDEN / "reference.pte", "1.5.1", [], [RULES])
    answer = prediction.answers[1]
    assert prediction.status == REFUSED and answer.error.endswith("0x:20")
    assert (
        answer.log == "Backend ReferenceBackend is not registered."
        and "--backend ReferenceBackend==" in answer.fix
    )


def test_operators_no_measured_program_ran_make_the_program_unknown():
    facts = dataclasses.replace(read_program(GOLDEN / "xnnpack.pte"), operators=("aten::sigmoid.out",))
    answer = predict(facts, "1.4.1", ["XnnpackBackend"]).answers[0]
    assert answer.status == UNKNOWN and "aten::sigmoid.out" in answer.why


def test_a_program_exported_by_a_newer_executorch_than_any_measured_is_unknown():
    facts = read_program(GOLDEN / "reference.pte")
    newer = dataclasses.replace(
        facts, delegates=(dataclasses.replace(facts.delegates[0], exported_with="1.7.0"),)
    )
    answer = predict(newer, "1.4.1", ["ReferenceBackend==0.2.0"], [RULES]).answers[0]
    assert answer.status == UNKNOWN and "exported with executorch 1.7.0" in answer.why


def test_a_foreign_blob_whose_format_was_not_measured_is_unknown():
    facts = read_program(GOLDEN / "xnnpack.pte")
    other = dataclasses.replace(facts.delegates[0], foreign_format="XH00/XN02")
    answer = predict(dataclasses.replace(facts, delegates=(other,)), "1.4.1", ["XnnpackBackend"]).answers[1]
    assert answer.status == UNKNOWN and "not XH00/XN02" in answer.why


@pytest.mark.parametrize(
    ("runtime", "backend", "status", "code"),
    [
        ("1.4.1", "ReferenceBackend==0.2.0", RUNS, 0),
        ("1.0.1", "ReferenceBackend==0.2.0", REFUSED, 1),
        ("1.6.0", "ReferenceBackend==0.3.0", UNKNOWN, 5),
    ],
)
def test_json_output_and_exit_codes(capsys, runtime, backend, status, code):
    argv = ["compat", str(GOLDEN / "reference.pte"), "--runtime", runtime, "--backend", backend]
    assert main([*argv, "--rules", str(RULES_PATH), "--json"]) == code
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == status and report["exit_code"] == code and report["runtime"] == runtime
    assert [a["target"] for a in report["answers"]] == ["program", "forward[0] ReferenceBackend"]
    assert set(report["answers"][1]) == {"target", "status", "why", "error", "log", "fix"}
    assert main([*argv, "--rules", str(RULES_PATH)]) == code
    assert capsys.readouterr().out.splitlines()[0].endswith(status.upper())
