"""Case generators shared by the tables: the shapes every elementwise operator is
tried on, the stress values, the dtype-dependent choices. A table calls them with
the operator's function and tolerance; what they generate is listed here once."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypedDict

from conformance.operators.spec import (
    EXACT,
    FLOAT32,
    Case,
    Input,
    Tolerance,
    call,
    is_float,
    with_constants,
)


class InputOptions(TypedDict, total=False):
    """Keyword options of ``I`` that a table shares between inputs: ``I(shape, **options)``."""

    dtype: str | None
    channels_last: bool
    constant: bool


#: (name, shape, traits) for one-input elementwise operators: ranks 0 to 4, sizes 1 and 0, odd sizes
#: (vector tails), a channels-last input and one large tensor.
UNARY_SHAPES: tuple[tuple[str, tuple[int, ...], set[str]], ...] = (
    ("rank0", (), {"rank0"}),
    ("size1", (1,), set()),
    ("size0", (0,), {"empty"}),
    ("rank3_size0", (2, 0, 3), {"empty"}),
    ("rank1_odd", (17,), set()),
    ("rank2", (5, 6), set()),
    ("rank3", (2, 3, 4), set()),
    ("rank4", (2, 3, 4, 5), set()),
    ("rank4_ones", (1, 1, 1, 1), set()),
)

#: (name, shape a, shape b, traits) for two-input elementwise operators.
BINARY_SHAPES: tuple[tuple[str, tuple[int, ...], tuple[int, ...], set[str]], ...] = (
    ("rank0", (), (), {"rank0"}),
    ("size1", (1,), (1,), set()),
    ("size0", (0,), (0,), {"empty"}),
    ("rank3_size0", (2, 0, 3), (2, 0, 3), {"empty"}),
    ("rank1_odd", (17,), (17,), set()),
    ("rank2", (5, 6), (5, 6), set()),
    ("rank3", (2, 3, 4), (2, 3, 4), set()),
    ("rank4", (2, 3, 4, 5), (2, 3, 4, 5), set()),
    ("bcast_row", (4, 5), (5,), {"broadcast"}),
    ("bcast_col", (4, 5), (4, 1), {"broadcast"}),
    ("bcast_lhs", (1, 5), (4, 5), {"broadcast"}),
    ("bcast_both", (3, 1, 5), (1, 4, 1), {"broadcast"}),
    ("bcast_rank0", (2, 3, 4), (), {"broadcast", "rank0"}),
    ("bcast_rank4", (2, 1, 4, 1), (1, 3, 1, 5), {"broadcast"}),
    ("bcast_size0", (3, 0), (1,), {"broadcast", "empty"}),
)


#: The dynamic dimensions of the dynamic cases, (dimension, upper bound), and the sizes they run at: below the
#: bounds (the program is planned for 8x12, the outputs must be resized) and at them. No size is 0 or 1, which
#: torch.export specializes.
DYNAMIC_BOUNDS: tuple[tuple[int, int], ...] = ((0, 8), (1, 12))
DYNAMIC_SIZES: tuple[tuple[str, tuple[int, int]], ...] = (("dynamic", (3, 5)), ("dynamic_at_bound", (8, 12)))


def _values(kind: str, dtype: str) -> str:
    """The value recipe for ``dtype``: integers have no "unit" interval (they get small random integers)."""
    return "normal" if kind == "unit" and not is_float(dtype) else kind


def unary(
    op: str,
    fn: Callable,
    tolerance: Tolerance,
    values: str = "normal",
    *,
    stress: str | None = "stress",
    special: bool = False,
    args: str = "",
) -> Callable[[str], list[Case]]:
    """Cases of a one-input elementwise operator: UNARY_SHAPES with ``values``, a channels-last input,
    stress values (``stress``: "stress", "stress:positive", "stress:moderate" or None), inf/NaN and subnormal
    operands if ``special`` (with the moderate large magnitudes too for "stress:moderate"), and a
    large input for float32."""

    def cases(dtype: str) -> list[Case]:
        v = _values(values, dtype)
        out = [
            Case(op, dtype, name, (Input(shape, dtype, v),), call(fn), tolerance, frozenset(t), args=args)
            for name, shape, t in UNARY_SHAPES
        ]
        out.append(
            Case(
                op,
                dtype,
                "channels_last",
                (Input((2, 3, 4, 5), dtype, v, channels_last=True),),
                call(fn),
                tolerance,
                frozenset({"channels_last"}),
                args=args,
            )
        )
        if stress:
            out.append(
                Case(
                    op,
                    dtype,
                    "stress",
                    (Input((4, 6), dtype, stress),),
                    call(fn),
                    tolerance,
                    frozenset({"stress"}),
                    args=args,
                )
            )
        if special and is_float(dtype):
            out.append(
                Case(
                    op,
                    dtype,
                    "inf_nan",
                    (Input((3, 5), dtype, "special:moderate" if stress == "stress:moderate" else "special"),),
                    call(fn),
                    tolerance,
                    frozenset({"inf_nan"}),
                    args=args,
                )
            )
            out.append(
                Case(
                    op,
                    dtype,
                    "subnormal",
                    (
                        Input(
                            (4, 5),
                            dtype,
                            "subnormal:positive" if stress == "stress:positive" else "subnormal",
                        ),
                    ),
                    call(fn),
                    tolerance,
                    frozenset({"subnormal"}),
                    args=args,
                )
            )
        if dtype == FLOAT32:
            out.append(
                Case(
                    op,
                    dtype,
                    "large",
                    (Input((65, 1601), dtype, v),),
                    call(fn),
                    tolerance,
                    frozenset({"large"}),
                    args=args,
                )
            )
        out += [
            Case(
                op,
                dtype,
                name,
                (Input(shape, dtype, v, dynamic=DYNAMIC_BOUNDS),),
                call(fn),
                tolerance,
                frozenset({"dynamic"}),
                args=args,
            )
            for name, shape in DYNAMIC_SIZES
        ]
        return out

    return cases


def binary(
    op: str,
    fn: Callable,
    tolerance: Tolerance,
    values: str = "normal",
    rhs: str | None = None,
    *,
    stress: str | None = "stress",
    special: bool = False,
    args: str = "",
) -> Callable[[str], list[Case]]:
    """Cases of a two-input elementwise operator: BINARY_SHAPES (same shapes and broadcast), mixed
    channels-last and contiguous operands, stress values, inf/NaN and subnormals (scaled by powers of two) if
    ``special``, a large pair."""
    rhs = rhs or values

    def cases(dtype: str) -> list[Case]:
        a, b = _values(values, dtype), _values(rhs, dtype)
        out = [
            Case(
                op,
                dtype,
                name,
                (Input(sa, dtype, a), Input(sb, dtype, b)),
                call(fn),
                tolerance,
                frozenset(t),
                args=args,
            )
            for name, sa, sb, t in BINARY_SHAPES
        ]
        out.append(
            Case(
                op,
                dtype,
                "channels_last_both",
                (Input((2, 3, 4, 5), dtype, a, True), Input((2, 3, 4, 5), dtype, b, True)),
                call(fn),
                tolerance,
                frozenset({"channels_last"}),
                args=args,
            )
        )
        out.append(
            Case(
                op,
                dtype,
                "channels_last_mixed",
                (Input((2, 3, 4, 5), dtype, a, True), Input((2, 3, 4, 5), dtype, b)),
                call(fn),
                tolerance,
                frozenset({"channels_last"}),
                args=args,
            )
        )
        if stress:
            out.append(
                Case(
                    op,
                    dtype,
                    "stress",
                    (Input((6, 8), dtype, stress), Input((6, 8), dtype, stress)),
                    call(fn),
                    tolerance,
                    frozenset({"stress"}),
                    args=args,
                )
            )
        if special and is_float(dtype):
            out.append(
                Case(
                    op,
                    dtype,
                    "inf_nan",
                    (Input((5, 6), dtype, "special"), Input((5, 6), dtype, "special")),
                    call(fn),
                    tolerance,
                    frozenset({"inf_nan"}),
                    args=args,
                )
            )
            out.append(
                Case(
                    op,
                    dtype,
                    "subnormal",
                    (Input((5, 6), dtype, "subnormal"), Input((5, 6), dtype, "pow2")),
                    call(fn),
                    tolerance,
                    frozenset({"subnormal"}),
                    args=args,
                )
            )
        if dtype == FLOAT32:
            out.append(
                Case(
                    op,
                    dtype,
                    "large",
                    (Input((65, 1601), dtype, a), Input((65, 1601), dtype, b)),
                    call(fn),
                    tolerance,
                    frozenset({"large"}),
                    args=args,
                )
            )
        out += [
            Case(
                op,
                dtype,
                name,
                (
                    Input(shape, dtype, a, dynamic=DYNAMIC_BOUNDS),
                    Input(shape, dtype, b, dynamic=DYNAMIC_BOUNDS),
                ),
                call(fn),
                tolerance,
                frozenset({"dynamic"}),
                args=args,
            )
            for name, shape in DYNAMIC_SIZES
        ]
        out.append(
            Case(
                op,
                dtype,
                "dynamic_bcast",
                (Input((3, 5), dtype, a, dynamic=DYNAMIC_BOUNDS[:1]), Input((5,), dtype, b)),
                call(fn),
                tolerance,
                frozenset({"dynamic", "broadcast"}),
                args=args,
            )
        )
        return out

    return cases


def listed(op: str, table: Iterable[tuple], tolerance: Tolerance = EXACT) -> Callable[[str], list[Case]]:
    """Cases from an explicit table: (name, fn, [Input recipes with dtype=None for the case dtype],
    traits, args[, reduction]). A recipe's dtype None means "the case's dtype"."""
    rows = tuple(table)

    def cases(dtype: str) -> list[Case]:
        out = []
        for row in rows:
            name, fn, recipes, traits, args = row[:5]
            reduction = row[5] if len(row) > 5 else 0
            inputs = tuple(
                Input(
                    r.shape,
                    r.dtype or dtype,
                    _values(r.values, r.dtype or dtype),
                    r.channels_last,
                    r.constant,
                    r.dynamic,
                )
                for r in recipes
            )
            build = with_constants(fn, inputs) if any(i.constant for i in inputs) else call(fn)
            out.append(Case(op, dtype, name, inputs, build, tolerance, frozenset(traits), reduction, args))
        return out

    return cases


def I(  # noqa: E743  the tables' short name for an input recipe
    shape: tuple[int, ...],
    values: str = "normal",
    *,
    dtype: str | None = None,
    channels_last: bool = False,
    constant: bool = False,
    dynamic: tuple[tuple[int, int], ...] = (),
) -> Input:
    """An input recipe for ``listed`` (dtype None: the case's dtype)."""
    return Input(tuple(shape), dtype, values, channels_last, constant, tuple(dynamic))  # type: ignore[arg-type]
