"""Exhaustive corruption of a real exported blob: every truncation, every
single-byte change of the header and of the payload gives an error or the
correct result; never a crash, never wrong output accepted silently."""

from __future__ import annotations

import pytest
import torch
from executorch.runtime import Runtime
from forge import replace_blob
from hypothesis import given, settings
from hypothesis import strategies as st
from models import cases

import reference_backend
from backend_kit.header import HeaderError, decode
from reference_backend.pte_blobs import delegate_blobs


@pytest.fixture(scope="module")
def mlp(runtime, exported):
    model, example = cases()["mlp"]
    pte = exported("mlp")
    (blob,) = delegate_blobs(pte)
    with torch.no_grad():
        expected = model(*example)
    return pte, blob.data, example, expected


def outcome(pte: bytes, example, expected) -> str:
    """'error' if loading or running fails, 'correct' if it matches eager, else 'WRONG'."""
    try:
        method = Runtime.get().load_program(pte).load_method("forward")
        (actual,) = method.execute(list(example))
    except RuntimeError:
        return "error"
    return "correct" if torch.allclose(actual, expected, rtol=1e-5, atol=1e-5) else "WRONG"


def test_every_truncation_is_refused(mlp):
    _, blob, _, _ = mlp
    verdicts = {reference_backend.judge_blob(blob[:n]).verdict for n in range(len(blob))}
    assert verdicts == {"invalid"}
    assert reference_backend.judge_blob(blob).verdict == "compatible"


def test_every_single_byte_change_of_the_header(mlp, capfd):
    pte, blob, example, expected = mlp
    length = decode(blob).header_length
    results = {}
    for offset in range(length):
        for flip in (0x01, 0xFF):

            def edit(raw, offset=offset, flip=flip):
                raw[offset] ^= flip
                return raw

            results[(offset, flip)] = outcome(replace_blob(pte, edit), example, expected)
    capfd.readouterr()
    assert "WRONG" not in results.values(), [k for k, v in results.items() if v == "WRONG"]
    assert set(results.values()) == {"error"}  # the checksum covers the header


def test_every_single_byte_change_of_the_payload(mlp, capfd):
    pte, blob, example, expected = mlp
    length = decode(blob).header_length
    results = {}
    for offset in range(length, len(blob)):

        def edit(raw, offset=offset):
            raw[offset] ^= 0xFF
            return raw

        results[offset] = outcome(replace_blob(pte, edit), example, expected)
    capfd.readouterr()
    assert "WRONG" not in results.values(), [k for k, v in results.items() if v == "WRONG"]
    assert set(results.values()) == {"error"}


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=256))
def test_python_decoder_gives_a_header_or_a_documented_error(data):
    try:
        header = decode(data)
    except HeaderError as exc:
        assert str(exc)
    else:
        assert header.header_length <= len(data)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=256))
def test_cpp_judge_on_any_bytes_gives_a_verdict_with_a_reason(runtime, data):
    j = reference_backend.judge_blob(data)
    assert j.verdict in ("compatible", "compatible, re-export recommended", "incompatible", "invalid")
    assert bool(j.message) == (j.verdict != "compatible")
