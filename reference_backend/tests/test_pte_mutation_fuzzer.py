"""The structure-aware mutation fuzzer (reference_backend/fuzz): its operator
mutations forge what they say with a valid checksum, and a short run against
the real runtime ends with no death and no run over its time bound."""

from __future__ import annotations

import json
import random
import struct
import subprocess
import sys
from pathlib import Path

from forged_programs import conv_relu_pte, fields_of, quant_conv_pte

from backend_kit.header import decode
from reference_backend.pte_blobs import delegate_blobs

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"
sys.path.insert(0, str(FUZZ))

from operator_mutations import mutate_operator, repair_shapes  # noqa: E402


def _payload(pte: bytes) -> tuple[bytearray, int]:
    (blob,) = delegate_blobs(pte)
    h = decode(blob.data)
    return bytearray(blob.data[h.header_length :]), h.blob_format[1]


def test_repair_gives_a_wrapped_kernel_span_the_shape_unchecked_arithmetic_infers():
    payload, minor = _payload(conv_relu_pte())
    f = fields_of(conv_relu_pte())
    conv = next(op for op in f.ops if op.name == "conv2d")
    w = f.values[conv.inputs[1]]
    struct.pack_into("<I", payload, w.dim_at(2), 0)  # kernel height 0: span 1 * (0 - 1) + 1 wraps to 0
    assert repair_shapes(payload, minor) == 2  # the conv2d's result and the relu's
    out = struct.unpack_from("<4I", payload, f.values[conv.output].dim_at(0))
    assert out == (1, 3, 8 + 2 * 1 - 0 + 1, 8), out  # H = (8 + 2 - 0) / 1 + 1


def test_repair_gives_2_to_the_31_channels_the_32_bit_word_count():
    pte = quant_conv_pte()
    payload, minor = _payload(pte)
    f = fields_of(pte)
    qconv = next(op for op in f.ops if op.name == "qconv2d")
    assert qconv.param_count == 11 + 2 * 4
    struct.pack_into("<I", payload, f.values[qconv.inputs[1]].dim_at(0), 1 << 31)
    repair_shapes(payload, minor)
    assert struct.unpack_from("<I", payload, qconv.at + 28)[0] == 11  # (11 + 2 * 2^31) mod 2^32


def test_operator_mutations_change_the_fields_they_name():
    pte = quant_conv_pte()
    original, minor = _payload(pte)
    rng = random.Random(7)
    seen = set()
    unchanged = 0
    for _ in range(300):
        payload = bytearray(original)
        what = mutate_operator(payload, minor, rng)
        seen.add(what.split(") ", 1)[1].split(" ")[0])
        unchanged += payload == original  # a value drawn equal to the old one, or repaired back
        assert len(payload) == len(original)
    assert unchanged < 30, unchanged
    assert {"parameter", "value", "operand", "result"} <= seen, seen


def test_a_short_run_has_no_death_and_no_run_over_the_time_bound(tmp_path):
    """400 mutants, most of them operator mutations, of the golden programs and
    the conv2d and qconv2d programs exported here (the fuzzer's own seed export
    takes minutes); the time bound is generous (the machine may be busy) and
    the compute maximum keeps each run short."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "conv_relu.pte").write_bytes(conv_relu_pte())
    (seeds / "quant_conv.pte").write_bytes(quant_conv_pte())
    proc = subprocess.run(
        [sys.executable, str(FUZZ / "pte_mutation_fuzzer.py"), "--count", "400", "--out", str(tmp_path)],
        capture_output=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["deaths"]["backend"] == summary["over_time_bound"]["backend"] == 0, summary
    assert summary["over_time_bound"]["upstream"] == summary["backend_failures"] == 0, summary
    operator = summary["outcomes_per_kind"]["operator"]
    assert sum(operator.values()) > 400 / 3, summary
    assert operator.get("refused", 0) > 0 and operator.get("ran", 0) > 0, operator  # both reached
