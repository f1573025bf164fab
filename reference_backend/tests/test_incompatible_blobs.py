"""Each incompatible or corrupt blob gives its documented outcome: the error
code from load_method, one C++ log line (captured at the file-descriptor
level) and a Python exception carrying the same facts."""

from __future__ import annotations

import re

import pytest
from executorch.runtime import Runtime
from exports import FORMAT_1_0
from forge import refresh_checksum, replace_blob, set_fields

import reference_backend
from backend_kit.header import decode, rewrite
from reference_backend import ProgramCompatibilityError, ReexportRecommendedWarning


def truncate_payload(raw: bytearray) -> bytearray:
    """The header promises 16 more payload bytes than the blob holds."""
    raw[:] = rewrite(raw, {"payload_size": decode(raw).payload_size + 16}, fix_checksum=False)
    return raw


def flip_payload_byte(raw: bytearray) -> bytearray:
    raw[-1] ^= 0x5A
    return raw


CASES = {
    # name: (edit, error code, log fragments)
    "newer_blob_major": (
        set_fields(blob_format=(2, 4)),
        0x30,
        [
            "incompatible blob",
            "format 2.4, written by 0.4.0 with executorch 1.5",
            "reads formats 1.0-1.4",
            "fix: re-export the model, executorch-reference-backend 0.4.0 writes no format 2.4 (the blob was altered)",
        ],
    ),
    "newer_blob_minor": (
        set_fields(blob_format=(1, 7)),
        0x30,
        ["incompatible blob", "format 1.7", "fix: re-export the model"],
    ),
    "older_blob_major": (
        set_fields(blob_format=(0, 4)),
        0x30,
        ["format 0.4", "fix: re-export with executorch-reference-backend>=0.4.0"],
    ),
    "unknown_header_version": (
        set_fields(header_format_version=9),
        0x30,
        ["header format 9, this runtime reads 1-2"],
    ),
    "wrong_magic": (
        set_fields(fix_checksum=False, magic=b"XNNP"),
        0x23,
        ["invalid blob", "wrong magic 'XNNP'"],
    ),
    "truncated": (lambda raw: refresh_checksum(truncate_payload(raw)), 0x23, ["invalid blob", "truncated"]),
    "bad_checksum": (flip_payload_byte, 0x23, ["invalid blob", "checksum mismatch"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_refused_blob_is_explained_in_log_and_python(runtime, exported, capfd, name):
    edit, code, fragments = CASES[name]
    pte = replace_blob(exported("mlp"), edit)
    capfd.readouterr()
    with pytest.raises(RuntimeError, match=re.escape(f"error: 0x:{code:x}")):
        Runtime.get().load_program(pte).load_method("forward")
    log = capfd.readouterr().err
    lines = [line for line in log.splitlines() if "] ReferenceBackend:" in line]
    assert len(lines) == 1, log
    for fragment in fragments:
        assert fragment in lines[0]

    with pytest.raises(ProgramCompatibilityError) as info:
        reference_backend.load_method(pte)
    message = str(info.value)
    assert "method 'forward', delegate 0" in message
    assert lines[0][lines[0].index("ReferenceBackend:") :] in message  # same facts as the log
    assert isinstance(info.value.__cause__, RuntimeError)


def test_older_minor_runs_with_a_warning(runtime, exported, capfd):
    pte = exported("mlp", FORMAT_1_0)
    (blob,) = [r.blob for r in reference_backend.inspect_program(pte)]
    assert reference_backend.decode_header(blob.data).blob_format == (1, 0)
    capfd.readouterr()
    from models import cases

    model, example = cases()["mlp"]
    hint = "fix: re-export with executorch-reference-backend>=0.4.0"
    with pytest.warns(ReexportRecommendedWarning, match=hint):  # noqa: PT031  either call may warn first
        method = reference_backend.load_method(pte)
        reference_backend.check_program(pte)
    out = method.execute(list(example))[0]
    assert "ReferenceBackend: warning: old blob, runs; format 1.0" in capfd.readouterr().err
    import torch

    torch.testing.assert_close(out, model(*example).detach(), rtol=1e-5, atol=1e-5)


def test_format_1_0_cannot_store_alpha(exported):
    with pytest.raises(Exception, match=r"alpha=0.5 needs blob format 1.1; format 1.0 cannot store it"):
        exported("elementwise_chain", FORMAT_1_0)


@pytest.mark.parametrize("spec", [b"2.0", b"1.9", b"one"])
def test_unwritable_blob_format_is_refused_at_partitioner_creation(spec):
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    with pytest.raises(ValueError, match=r"blob format|MAJOR.MINOR"):
        reference_backend.ReferencePartitioner([CompileSpec("blob_format", spec)])


def test_log_lines_fit_executorch_logger_with_two_digit_versions(runtime):
    from backend_kit.header import Header, encode

    # ExecuTorch cuts a log message at 255 bytes ("$" marks the cut).
    for fmt in [(99, 99), (1, 0), (0, 99)]:
        blob = encode(Header("ReferenceBackend", fmt, (99, 99, 99), (99, 99, 99)), b"")
        assert len(reference_backend.judge_blob(blob).message) <= 253


def test_unregistered_backend_is_named(runtime, exported, capfd):
    pte = exported("mlp")
    forged = pte.replace(b"ReferenceBackend\0", b"ReferenceBackenX\0", 1)
    assert forged != pte
    with pytest.raises(RuntimeError, match=re.escape("error: 0x:20")):
        Runtime.get().load_program(forged).load_method("forward")
    with pytest.raises(
        ProgramCompatibilityError, match="backend 'ReferenceBackenX' is not registered in this process"
    ):
        reference_backend.load_method(forged)
