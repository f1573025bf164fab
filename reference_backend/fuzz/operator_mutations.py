"""Structure-aware mutations of a reference blob's payload (issue 31): the
operator parameters an attacker with a valid checksum controls, not bytes.

One mutation picks an op of the payload and changes one of:

- a parameter word: conv geometry (stride, padding, dilation, groups),
  zero points, clamp bounds, multipliers, shifts, the per-channel words;
- a dimension of one of its operands or of its result: shapes, kernel sizes,
  channel counts (to 0, 1, 2^16, 2^31, 2^32 - 1, doubled, ...);
- its parameter offset or count, an operand or result id, its operand count;
- the rank of an operand.

Then, one time in two, the shapes are *repaired*: every op's result gets
the shape that unchecked 64-bit arithmetic truncated to 32 bits would infer
(a kernel span dilation * (k - 1) + 1 wrapping to 0 for k = 0, a per-channel
word count 2 * channels wrapping in 32 bits), the way a forger makes a blob
that passes a runtime whose arithmetic is not checked. Repaired mutants get
past shape validation and reach the memory and compute bounds and execute().

The caller recomputes the checksum (and may raise the header's memory limit).
"""

from __future__ import annotations

import random
import struct

from payload_fields import CONV_OPCODES, PayloadFields, read_fields

U32 = (1 << 32) - 1
U64 = (1 << 64) - 1
#: Interesting dimensions: empty, unit, small, the 2^16 and 2^31 boundaries, the u32 top.
DIMS = (0, 1, 2, 3, 7, 8, 64, 0xFFFF, 0x10000, 16384, 1 << 20, (1 << 31) - 1, 1 << 31, U32 - 1, U32)
#: Interesting parameter words (i32): conv geometry bounds, int8 bounds, shifts, sign bits.
WORDS = (0, 1, 2, 3, -1, 62, 63, 64, 65535, 65536, 127, 128, -128, -129, 1 << 30, (1 << 31) - 1, -(1 << 31))
#: Fixed parameter words of the per-channel ops (docs/blob-header.md, format 1.3).
PER_CHANNEL_FIXED = {9: 4, 10: 11}


def _dim(rng: random.Random, old: int) -> int:
    r = rng.random()
    if r < 0.55:
        return rng.choice([d for d in DIMS if d != old])
    if r < 0.8:
        return (old + rng.choice((-1, 1, 2, 64, 4096))) & U32
    if r < 0.9:
        return (old * rng.choice((2, 16, 1024))) & U32
    return rng.getrandbits(32)


def _word(rng: random.Random, old: int) -> int:
    r = rng.random()
    if r < 0.6:
        return rng.choice([w for w in WORDS if w != old])
    if r < 0.85:
        return old + rng.choice((-1, 1, 2, 100, 30000))
    return rng.getrandbits(32) - (1 << 31)


def _put_u32(payload: bytearray, at: int, value: int) -> None:
    struct.pack_into("<I", payload, at, value & U32)


def _put_i32(payload: bytearray, at: int, value: int) -> None:
    struct.pack_into("<i", payload, at, ((value + (1 << 31)) & U32) - (1 << 31))


def mutate_operator(payload: bytearray, minor: int, rng: random.Random) -> str:
    """Mutates ``payload`` (a valid payload of blob format 1.``minor``) in place; returns what changed."""
    f = read_fields(bytes(payload), minor)
    if not f.ops:
        return "no op"
    op = rng.choice(f.ops)
    targets = ["dim"] * 5 + ["rank", "operand", "count"]
    if op.param_count:
        targets += ["param"] * 6 + ["param_span"]
    target = rng.choice(targets)
    what = f"op {op.index} ({op.name}) "
    if target == "param":
        k = rng.randrange(op.param_count)
        old = f.param(payload, op, k)
        _put_i32(payload, f.param_at(op, k), _word(rng, old))
        what += f"parameter word {k}"
    elif target == "param_span":
        k = rng.choice((24, 28))
        old = struct.unpack_from("<I", payload, op.at + k)[0]
        _put_u32(payload, op.at + k, _dim(rng, old))
        what += "parameter offset" if k == 24 else "parameter count"
    elif target == "dim":
        value = f.values[rng.choice([*op.inputs, op.output])]
        if value.rank == 0:
            return what + "scalar operand left alone"
        d = rng.randrange(value.rank)
        _put_u32(payload, value.dim_at(d), _dim(rng, value.dims[d]))
        what += f"value {value.index} dimension {d}"
        if value.index == op.output:
            return what  # a repair would undo it
    elif target == "rank":
        value = f.values[rng.choice(op.inputs)]
        payload[value.at + 2] = rng.choice((0, 1, 2, 3, 4, 5, 8, 9, 255))
        what += f"value {value.index} rank"
    elif target == "operand":
        k = rng.randrange(4)
        at = op.at + (4 if k == 3 else 8 + 4 * k)
        _put_u32(
            payload, at, rng.choice((0, 1, len(f.values) - 1, len(f.values), rng.randrange(len(f.values))))
        )
        what += "result id" if k == 3 else f"operand {k} id"
    else:
        payload[op.at + 1] = rng.choice((0, 1, 2, 3, 4, 255))
        what += "operand count"
    if rng.random() < 0.5:
        repaired = repair_shapes(payload, minor)
        what += f", {repaired} shapes repaired"
    return what


# --------------------------------------------------------------------------- unchecked shape inference


def _broadcast(a: list[int], b: list[int]) -> list[int] | None:
    rank = max(len(a), len(b))
    out = []
    for i in range(rank):
        da = a[len(a) - 1 - i] if i < len(a) else 1
        db = b[len(b) - 1 - i] if i < len(b) else 1
        if da != db and 1 not in (da, db):
            return None
        out.append(db if da == 1 else da)
    return out[::-1]


def _conv_size(in_: int, k: int, stride: int, pad: int, dil: int) -> int | None:
    """The output size as unchecked u64 arithmetic, cast to u32, computes it."""
    span = (dil * ((k - 1) & U64) + 1) & U64
    padded = (in_ + 2 * pad) & U64
    if stride <= 0 or padded < span:
        return None
    return ((padded - span) // stride + 1) & U32


def _infer(f: PayloadFields, payload: bytes, op, shapes: dict[int, list[int]]) -> list[int] | None:
    try:
        x = shapes[op.inputs[0]]
        if op.code in (1, 2, 3, 11):
            return _broadcast(x, shapes[op.inputs[1]])
        if op.code in (4, 7, 8, 12):
            return list(x)
        w = shapes[op.inputs[1]]
        if op.code in (5, 9):
            return [*x[:-1], w[0]] if x and len(w) == 2 else None
        if op.code in CONV_OPCODES and len(x) == 4 and len(w) == 4 and op.param_count >= 7:
            p = [f.param(payload, op, k) for k in range(7)]
            h = _conv_size(x[2], w[2], p[0], p[2], p[4])
            wd = _conv_size(x[3], w[3], p[1], p[3], p[5])
            return None if h is None or wd is None else [x[0], w[0], h, wd]
    except (IndexError, KeyError, struct.error):
        return None
    return None


def repair_shapes(payload: bytearray, minor: int) -> int:
    """Gives each op's result the shape unchecked arithmetic infers, and each
    per-channel op the word count 32-bit arithmetic computes; returns how many
    results changed."""
    f = read_fields(bytes(payload), minor)
    shapes = {v.index: list(v.dims) for v in f.values}
    changed = 0
    for op in f.ops:
        if op.output >= len(f.values) or any(i >= len(f.values) for i in op.inputs):
            continue
        fixed = PER_CHANNEL_FIXED.get(op.code)
        if fixed is not None and len(op.inputs) > 1 and shapes[op.inputs[1]]:
            count = (fixed + 2 * shapes[op.inputs[1]][0]) & U32
            if op.param_offset + count <= f.num_params:
                _put_u32(payload, op.at + 28, count)
                op.param_count = count
        out = _infer(f, bytes(payload), op, shapes)
        if out is None or len(out) > 8:
            continue
        value = f.values[op.output]
        if out != shapes[op.output]:
            changed += 1
        shapes[op.output] = out
        payload[value.at + 2] = len(out)
        struct.pack_into("<8I", payload, value.at + 4, *(d & U32 for d in out), *[0] * (8 - len(out)))
    return changed
