"""Size arithmetic on blob fields is checked (issue 31; include/reference_backend/checked.h):
forged programs with a valid checksum, one per class of defect, must be refused at init
with one line naming the operator and the field, in a live process that returns.

- wrap to zero: a zero-sized kernel dimension makes the span dilation*(k-1)+1 wrap to 0;
  with huge padding the (dead) conv2d then loops for hours at execute;
- wrap past a bound: 2^31 output channels make the qconv2d's per-channel word count
  4 + 2*2^31 wrap to 4 in 32 bits, so the op passes without its multipliers and shifts;
- 32/64-bit truncation: an output size or a channel product that does not fit in 32 bits
  is cut to one that matches a forged declared shape.
"""

from __future__ import annotations

import pytest
from forged_programs import (
    conv_relu_pte,
    fields_of,
    forge,
    op_named,
    quant_conv_pte,
    set_dims,
    set_operands,
    set_param,
)
from hostile_child import run_in_child
from payload_fields import CONV_GEOMETRY

PAD_H, PAD_W, GROUPS = (CONV_GEOMETRY.index(w) for w in ("pad_h", "pad_w", "groups"))


def _refused_at_init(tmp_path, pte: bytes, *fragments: str):
    (tmp_path / "forged.pte").write_bytes(pte)
    result = run_in_child(tmp_path / "forged.pte")
    assert result.stage == "load" and result.error is not None, (
        f"the forged program was accepted (got to {result.stage})"
    )
    assert "0x:23" in result.error, result.error  # InvalidProgram
    (line,) = result.backend_lines()
    for fragment in fragments:
        assert fragment in line, line
    return line


@pytest.mark.full  # each starts processes that export and run: the full tier (CI) runs it
def test_the_forgeries_start_from_programs_that_run(tmp_path):
    for pte in (conv_relu_pte(), quant_conv_pte()):
        (tmp_path / "m.pte").write_bytes(pte)
        result = run_in_child(tmp_path / "m.pte")
        assert (result.stage, result.error) == ("done", None), result.stderr[-2000:]


# --------------------------------------------------------------------------- wrap to zero


def test_a_zero_sized_kernel_dimension_with_huge_padding_is_refused(tmp_path):
    """A dead conv2d (relu reads the graph input instead) over a constant of
    2000 channels and zero height, weight [1, 2000, 0, 1], padding 65535: on
    an unchecked runtime the kernel span is 0 and execute loops ~5e10 times."""
    pte = conv_relu_pte()
    f = fields_of(pte)
    conv, relu = op_named(f, "conv2d"), op_named(f, "relu")
    x, w, b = conv.inputs

    def edit(p, f):
        set_operands(p, relu, [x])  # the conv2d's result is now read by nothing
        set_operands(p, conv, [b, w])  # its input: the bias constant, reshaped
        set_dims(p, f.values[b], [1, 2000, 0, 1])
        set_dims(p, f.values[w], [1, 2000, 0, 1])
        set_param(p, f, conv, PAD_H, 65535)
        set_param(p, f, conv, PAD_W, 100)
        # What unsigned arithmetic infers: H (0 + 2*65535 - 0) + 1, W (1 + 200 - 1) + 1.
        set_dims(p, f.values[conv.output], [1, 1, 131071, 201])

    _refused_at_init(tmp_path, forge(pte, edit), "op 0 (conv2d)", "kernel height is 0")


@pytest.mark.parametrize("kernel_dim", [2, 3])
def test_a_zero_sized_kernel_dimension_is_refused_whatever_the_padding(tmp_path, kernel_dim):
    pte = conv_relu_pte()
    f = fields_of(pte)
    conv = op_named(f, "conv2d")
    _x, w, _b = conv.inputs
    dims = [3, 3, 3, 3]
    dims[kernel_dim] = 0

    def edit(p, f):
        set_dims(p, f.values[w], dims)

    which = "height" if kernel_dim == 2 else "width"
    _refused_at_init(tmp_path, forge(pte, edit), "op 0 (conv2d)", f"kernel {which} is 0")


# --------------------------------------------------------------------------- wrap past a bound


def test_two_to_the_31_output_channels_of_a_qconv2d_are_refused(tmp_path):
    """Weight [2^31, 0, 1, 1] (no bytes), batch 0: the op's 7 + 4 fixed words
    pass for the 7 + 4 + 2 * 2^31 it takes when that count wraps in 32 bits."""
    pte = quant_conv_pte()
    f = fields_of(pte)
    quantize, qconv, dequantize = (op_named(f, n) for n in ("quantize", "qconv2d", "dequantize"))
    xq, w = qconv.inputs[:2]

    def edit(p, f):
        for value in (quantize.inputs[0], xq):
            set_dims(p, f.values[value], [0, 0, 1, 1])
        set_dims(p, f.values[w], [1 << 31, 0, 1, 1])
        set_operands(p, qconv, [xq, w])
        p[qconv.at + 28 : qconv.at + 32] = (11).to_bytes(4, "little")  # param_count
        for value in (qconv.output, dequantize.output):
            set_dims(p, f.values[value], [0, 1 << 31, 1, 1])

    _refused_at_init(
        tmp_path, forge(pte, edit), "op 1 (qconv2d)", "parameter words", "2147483648 output channels"
    )


# --------------------------------------------------------------------------- 32/64-bit truncation


def test_an_output_size_above_32_bits_is_not_cut_to_a_declared_one(tmp_path):
    """Input height 2^32 - 1, padding 1: the output height is 2^32 + 1, which a
    32-bit cast makes 1, the height the forged result declares."""
    pte = conv_relu_pte()
    f = fields_of(pte)
    conv, relu = op_named(f, "conv2d"), op_named(f, "relu")
    x, w, _b = conv.inputs

    def edit(p, f):
        set_dims(p, f.values[x], [1, 0, (1 << 32) - 1, 1])
        set_dims(p, f.values[w], [3, 0, 1, 1])
        set_param(p, f, conv, PAD_W, 0)
        for value in (conv.output, relu.output):
            set_dims(p, f.values[value], [1, 3, 1, 1])

    _refused_at_init(tmp_path, forge(pte, edit), "op 0 (conv2d)", "output height", "4294967297")


@pytest.mark.full  # each starts processes that export and run: the full tier (CI) runs it
def test_a_channel_product_above_32_bits_is_not_cut_to_zero(tmp_path):
    """Weight [0, 2^31, 1, 1] with groups 2: 2^31 * 2 input channels, which is
    0 in 32 bits, the channel count of the forged input."""
    pte = conv_relu_pte()
    f = fields_of(pte)
    conv, relu = op_named(f, "conv2d"), op_named(f, "relu")
    x, w, b = conv.inputs

    def edit(p, f):
        set_dims(p, f.values[x], [1, 0, 8, 8])
        set_dims(p, f.values[w], [0, 1 << 31, 3, 3])
        set_dims(p, f.values[b], [0])
        set_param(p, f, conv, GROUPS, 2)
        for value in (conv.output, relu.output):
            set_dims(p, f.values[value], [1, 0, 8, 8])

    _refused_at_init(tmp_path, forge(pte, edit), "op 0 (conv2d)", "groups")
