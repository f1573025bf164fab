"""What a backend declares about its operators (``BackendDescriptor.operators``).

For each operator (its schema name in the edge program, ``aten::add.Tensor``;
``aten::relu.default`` and ``aten::relu`` are the same) the dtypes the backend
executes, whether it accepts dynamic shapes, and the case traits
(``conformance.operators.spec.TRAITS``) it does not support. The suite runs
every corpus case of every declared operator and dtype: the partitioner must
claim it (C-OPS-1) and the runtime must compute it (C-OPS-2). A case with a
trait the backend declares unsupported need not be claimed; if it is claimed
anyway, it must still compute correctly.

The common case is one line::

    operators=OperatorSupport.float32("aten::add.Tensor", "aten::relu.default")

and several dtypes, or a mapping::

    OperatorSupport.of(("float32", "float16"), "aten::add.Tensor") | OperatorSupport({"aten::mul.Tensor": ["int32"]})

A backend whose results are deliberately less precise than the corpus's tolerances (one that computes
float32 in bf16, say) declares its own, per operator and dtype, as (rtol, atol)::

    OperatorSupport.float32("aten::mm", tolerance=(2**-6, 2**-6))
    support.with_tolerance(2**-6, 2**-6, dtype="float32")   # every declared float32 operator

or, for a backend that computes in a lower precision, the precision, so that each case is judged
with the corpus's own tolerance for that precision (which grows with the case's reduction length)::

    support.computing_in("bfloat16", dtype="float32")

or, for transcendental kernels less accurate than the corpus asks, the accuracy in units in the last place::

    support.with_accuracy(16, ops=["aten::exp", "aten::log"])   # 16 ULP, relative and absolute

A case then passes within the larger of the corpus's tolerance and the declared one, and the report
says which operators were judged with a declared tolerance.

An operator that selects among its operands (maximum, minimum, amax, amin, max pooling) and leaves a NaN
operand out, as TOSA 1.0's ``nan_mode=IGNORE`` does, declares so; its cases holding a NaN are then judged
against that result, not eager's::

    support.ignoring_nan("aten::maximum", "aten::minimum")

An operator that flushes subnormal operands and results to zero (FTZ/DAZ, as many accelerators do) declares
so; its cases holding subnormals then pass with either eager's result or the flushed one
(conformance/operators/subnormals.py)::

    support.flushing_subnormals()                  # every declared floating-point operator
    support.flushing_subnormals("aten::sqrt")      # one
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from conformance.operators.corpus import normalize
from conformance.operators.nan_modes import IGNORE, NAN_MODES, PROPAGATE, nan_mode_problem
from conformance.operators.spec import DTYPES, EPS, FLOAT32, TRAITS
from conformance.operators.subnormals import FLUSHED, KEPT, subnormal_mode_problem


def is_schema_name(op: object) -> bool:
    """Whether ``op`` is an operator schema name ('aten::add.Tensor', 'my_ns::op'): text with a namespace."""
    return isinstance(op, str) and "::" in op


@dataclasses.dataclass(frozen=True)
class OperatorDeclaration:
    """One operator: the dtypes it runs in, dynamic shapes, unsupported case traits (``without``: trait
    names, or 'case:NAME' for one corpus case the backend does not support), and the reason."""

    dtypes: tuple[str, ...] = (FLOAT32,)
    dynamic: bool = False
    without: tuple[str, ...] = ()
    reason: str = ""
    #: (dtype, rtol, atol) the backend declares for its results, widening the corpus's tolerance; given as
    #: a mapping dtype -> (rtol, atol) or one (rtol, atol) for every dtype of the declaration
    tolerances: tuple[tuple[str, float, float], ...] = ()
    #: (dtype, precision): results of dtype are computed in the lower float precision (a backend that computes
    #: float32 in bfloat16) and judged with the corpus's tolerance for that precision; given as a mapping
    #: dtype -> precision, or one precision for every float dtype of the declaration
    computes_in: tuple[tuple[str, str], ...] = ()
    #: what a NaN operand does (conformance/operators/nan_modes.py): "propagate" (eager PyTorch's) or, for an
    #: operator that selects among its operands, "ignore" (TOSA 1.0's IGNORE: IEEE maxNum/minNum)
    nan_mode: str = PROPAGATE
    #: what a subnormal operand or result is (conformance/operators/subnormals.py): "kept" (IEEE 754, eager
    #: PyTorch's) or "flushed" to a zero of its sign
    subnormals: str = KEPT
    #: the backend runs the operator only between a dequantize and a quantize (an integer-only backend): the
    #: corpus runs none of its float cases, only the quantized cases that require it (``Case.requires``)
    quantized_only: bool = False

    def precision(self, dtype: str) -> str | None:
        """The precision results of ``dtype`` are declared to be computed in, or None."""
        return dict(self.computes_in).get(dtype)

    def tolerance(self, dtype: str) -> tuple[float, float] | None:
        """The (rtol, atol) declared for results of ``dtype``, or None."""
        for d, rtol, atol in self.tolerances:
            if d == dtype:
                return rtol, atol
        return None

    def excludes(self, case) -> bool:
        """Whether the backend declares ``case`` (a conformance.operators.spec.Case) unsupported."""
        return bool(case.traits & set(self.without)) or f"case:{case.name}" in self.without

    def __post_init__(self) -> None:
        dtypes = (self.dtypes,) if isinstance(self.dtypes, str) else tuple(self.dtypes)
        without = (self.without,) if isinstance(self.without, str) else tuple(self.without)
        for d in dtypes:
            if d not in DTYPES:
                raise ValueError(f"unknown dtype {d!r}; known: {', '.join(DTYPES)}")
        for t in without:
            if t not in TRAITS and not t.startswith("case:"):
                raise ValueError(f"unknown case trait {t!r}; known: {', '.join(TRAITS)}, or 'case:NAME'")
        if not dtypes:
            raise ValueError("an operator declaration needs at least one dtype")
        if self.nan_mode not in NAN_MODES:
            raise ValueError(
                f"nan_mode is {self.nan_mode!r}, not one of {', '.join(repr(m) for m in NAN_MODES)}"
            )
        problem = subnormal_mode_problem(self.subnormals)
        if problem is not None:
            raise ValueError(problem)
        object.__setattr__(self, "dtypes", tuple(dict.fromkeys(dtypes)))
        object.__setattr__(self, "without", tuple(sorted(set(without))))
        object.__setattr__(self, "tolerances", _tolerances(self.tolerances, self.dtypes))
        object.__setattr__(self, "computes_in", _precisions(self.computes_in, self.dtypes))


def _precisions(given, dtypes: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``given`` (a precision, a mapping dtype -> precision, or (dtype, precision) pairs) as sorted pairs."""
    if not given:
        return ()
    if isinstance(given, str):
        pairs = [(d, given) for d in dtypes if d in EPS]
    elif isinstance(given, Mapping):
        pairs = list(given.items())
    else:
        pairs = [tuple(p) for p in given]
    for d, precision in pairs:
        if d not in dtypes:
            raise ValueError(
                f"computes_in names {d!r}, but the operator is declared for {', '.join(dtypes)} only"
            )
        if precision not in EPS or d not in EPS or EPS[precision] < EPS[d]:
            raise ValueError(
                f"computes_in says {d} results are computed in {precision!r}: give a float dtype no more precise "
                f"than {d} ({', '.join(k for k in EPS if EPS[k] >= EPS.get(d, 0))})"
            )
    return tuple(sorted(dict(pairs).items()))


def _tolerances(given, dtypes: tuple[str, ...]) -> tuple[tuple[str, float, float], ...]:
    """``given`` (a mapping dtype -> (rtol, atol), one (rtol, atol), or (dtype, rtol, atol) triples) as
    sorted triples; ValueError naming what is wrong."""
    if not given:
        return ()
    if isinstance(given, Mapping):
        items = [(d, *pair) for d, pair in given.items()]
    elif len(given) == 2 and all(isinstance(v, (int, float)) for v in given):
        items = [(d, *given) for d in dtypes]
    else:
        items = [tuple(t) for t in given]
    out = {}
    for item in items:
        if len(item) != 3:
            raise ValueError(f"a tolerance is (rtol, atol) for a dtype, not {item[1:]!r}")
        d, rtol, atol = item
        if d not in dtypes:
            raise ValueError(
                f"a tolerance is declared for {d!r}, but the operator is declared for {', '.join(dtypes)} only"
            )
        for name, value in (("rtol", rtol), ("atol", atol)):
            if (
                not isinstance(value, (int, float))
                or isinstance(value, bool)
                or not math.isfinite(value)
                or value < 0
            ):
                raise ValueError(f"the {name} declared for {d} is {value!r}, not a finite number >= 0")
        out[d] = (d, float(rtol), float(atol))
    return tuple(sorted(out.values()))


def _tolerance_line(op: str, dtype: str, rtol: float, atol: float) -> str:
    """'aten::exp float32: 16 ULP' for a tolerance declared in ULP (with_accuracy), else the rtol and atol."""
    eps = EPS.get(dtype)
    if eps is not None and rtol == atol and rtol / eps == round(rtol / eps):
        return f"{op} {dtype}: {rtol / eps:g} ULP"
    return f"{op} {dtype}: rtol {rtol:g} atol {atol:g}"


class OperatorSupport(Mapping[str, OperatorDeclaration]):
    """Operator schema name -> OperatorDeclaration (immutable; ``|`` merges, the right side wins)."""

    def __init__(
        self, declarations: Mapping[str, OperatorDeclaration | Iterable[str] | str] | None = None
    ) -> None:
        found: dict[str, OperatorDeclaration] = {}
        for op, given in (declarations or {}).items():
            if not is_schema_name(op):
                raise ValueError(f"operator {op!r} is not a schema name such as 'aten::add.Tensor'")
            if isinstance(given, OperatorDeclaration):
                value = given
            else:
                value = OperatorDeclaration(tuple([given] if isinstance(given, str) else given))
            problem = nan_mode_problem(normalize(op), value.nan_mode)
            if problem is not None:
                raise ValueError(problem)
            found[normalize(op)] = value
        self._ops = found

    @classmethod
    def of(
        cls,
        dtypes: Iterable[str] | str,
        *ops: str,
        dynamic: bool = False,
        without: Iterable[str] = (),
        reason: str = "",
        tolerance=(),
        computes_in=(),
        nan_mode: str = PROPAGATE,
    ) -> OperatorSupport:
        """``tolerance``: (rtol, atol) for every dtype, or a mapping dtype -> (rtol, atol); ``computes_in``: the
        lower precision the results are computed in (one for every float dtype, or a mapping); ``nan_mode``:
        "ignore" for operators that leave a NaN operand out (conformance/operators/nan_modes.py)."""
        declaration = OperatorDeclaration(
            tuple([dtypes] if isinstance(dtypes, str) else dtypes),
            dynamic,
            tuple(without),
            reason,
            tolerance,
            computes_in,
            nan_mode,
        )
        return cls(dict.fromkeys(ops, declaration))

    @classmethod
    def in_quantized_patterns(
        cls, *ops: str, without: Iterable[str] = (), reason: str = ""
    ) -> OperatorSupport:
        """``ops`` declared for an integer-only backend: each runs only inside a quantized pattern
        (dequantize -> operator -> quantize), so only quantized cases exercise it: the corpus's quantized
        patterns, or, for a backend whose ``quantized.every_sample`` is set, its float cases quantized by the
        backend's own quantizer. ``without``: traits or 'case:NAME' of cases it does not support."""
        declaration = OperatorDeclaration(
            (FLOAT32,),
            without=tuple(without),
            reason=reason or "integer-only: inside quantized patterns",
            quantized_only=True,
        )
        return cls(dict.fromkeys(ops, declaration))

    @classmethod
    def float32(
        cls,
        *ops: str,
        dynamic: bool = False,
        without: Iterable[str] = (),
        reason: str = "",
        tolerance=(),
        computes_in=(),
        nan_mode: str = PROPAGATE,
    ):
        return cls.of(
            (FLOAT32,),
            *ops,
            dynamic=dynamic,
            without=without,
            reason=reason,
            tolerance=tolerance,
            computes_in=computes_in,
            nan_mode=nan_mode,
        )

    def ignoring_nan(self, *ops: str) -> OperatorSupport:
        """A copy in which each of ``ops`` (each declared, and each an operator that selects among its
        operands) declares nan_mode "ignore": a NaN operand is left out (TOSA 1.0's IGNORE)."""
        missing = [op for op in ops if op not in self]
        if missing:
            raise ValueError(f"ignoring_nan names {', '.join(missing)}, which the declaration does not hold")
        wanted = {normalize(op) for op in ops}
        return OperatorSupport(
            {
                op: dataclasses.replace(d, nan_mode=IGNORE) if op in wanted else d
                for op, d in self._ops.items()
            }
        )

    def flushing_subnormals(self, *ops: str) -> OperatorSupport:
        """A copy in which each of ``ops`` (each declared; none: every operator declared for a floating-point
        dtype) declares subnormals "flushed": subnormal operands and results are zeros of their sign."""
        missing = [op for op in ops if op not in self]
        if missing:
            raise ValueError(
                f"flushing_subnormals names {', '.join(missing)}, which the declaration does not hold"
            )
        wanted = {normalize(op) for op in ops} or {
            op for op, d in self._ops.items() if any(x in EPS for x in d.dtypes)
        }
        return OperatorSupport(
            {
                op: dataclasses.replace(d, subnormals=FLUSHED) if op in wanted else d
                for op, d in self._ops.items()
            }
        )

    def computing_in(self, precision: str, dtype: str = FLOAT32) -> OperatorSupport:
        """A copy in which every operator declared for ``dtype`` says its results are computed in ``precision``
        (a backend that computes float32 in bfloat16 by default)."""
        changed = {}
        for op, decl in self._ops.items():
            merged = dict(decl.computes_in) | {dtype: precision}
            changed[op] = (
                dataclasses.replace(decl, computes_in=tuple(merged.items())) if dtype in decl.dtypes else decl
            )
        return OperatorSupport(changed)

    def with_tolerance(
        self, rtol: float, atol: float, dtype: str | None = None, ops: Iterable[str] | None = None
    ) -> OperatorSupport:
        """A copy in which each operator of ``ops`` (default: every one) declared for ``dtype`` (default: for
        each of its dtypes) has the tolerance (rtol, atol)."""
        wanted = None if ops is None else {normalize(op) for op in ops}
        changed = {}
        for op, decl in self._ops.items():
            dtypes = [d for d in decl.dtypes if dtype is None or d == dtype]
            if (wanted is not None and op not in wanted) or not dtypes:
                changed[op] = decl
                continue
            merged = {d: (r, a) for d, r, a in decl.tolerances}
            merged.update(dict.fromkeys(dtypes, (rtol, atol)))
            changed[op] = dataclasses.replace(decl, tolerances=tuple((d, *ra) for d, ra in merged.items()))
        return OperatorSupport(changed)

    def with_accuracy(
        self, ulps: float, ops: Iterable[str] | None = None, dtype: str | None = None
    ) -> OperatorSupport:
        """A copy in which each operator of ``ops`` (default: every one) is declared accurate to ``ulps`` units
        in the last place for each floating-point dtype (or ``dtype``): the tolerance (ulps * eps, ulps * eps)
        of that dtype, for a backend whose transcendental kernels are less accurate than the corpus asks (4 ULP
        for exp, log, tanh, ...). The report lists it as 'aten::exp float32: 16 ULP'."""
        if (
            isinstance(ulps, bool)
            or not isinstance(ulps, (int, float))
            or not math.isfinite(ulps)
            or ulps <= 0
        ):
            raise ValueError(f"with_accuracy: ulps is {ulps!r}, not a finite number > 0")
        out = self
        for d in (
            [dtype] if dtype is not None else sorted({d for decl in self._ops.values() for d in decl.dtypes})
        ):
            if d not in EPS:
                if dtype is not None:
                    raise ValueError(f"with_accuracy: {d!r} is not a floating-point dtype ({', '.join(EPS)})")
                continue
            out = out.with_tolerance(ulps * EPS[d], ulps * EPS[d], d, ops)
        return out

    @classmethod
    def coerce(cls, value) -> OperatorSupport:
        return value if isinstance(value, OperatorSupport) else cls(value)

    def __or__(self, other: Mapping) -> OperatorSupport:
        merged = dict(self._ops)
        merged.update(OperatorSupport.coerce(other)._ops)
        return OperatorSupport(merged)

    def __getitem__(self, op: str) -> OperatorDeclaration:
        return self._ops[normalize(op)]

    def __contains__(self, op: object) -> bool:
        return isinstance(op, str) and normalize(op) in self._ops

    def __iter__(self) -> Iterator[str]:
        return iter(self._ops)

    def __len__(self) -> int:
        return len(self._ops)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OperatorSupport) and self._ops == other._ops

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._ops.items(), key=lambda kv: kv[0])))

    def __repr__(self) -> str:
        return f"OperatorSupport({self._ops!r})"

    def to_json(self) -> dict[str, dict[str, object]]:
        """The JSON form (how the declaration crosses from the vendor process): operator -> each field of
        its OperatorDeclaration, tuples as lists. A field added to OperatorDeclaration crosses with no other
        edit, if its value is JSON data and its ``__post_init__`` accepts the form ``from_json`` gives back
        (lists where tuples were)."""
        return {
            op: {
                f.name: list(v) if isinstance(v, tuple) else v
                for f in dataclasses.fields(OperatorDeclaration)
                for v in (getattr(decl, f.name),)
            }
            for op, decl in self._ops.items()
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Mapping[str, object]]) -> OperatorSupport:
        """The OperatorSupport of ``to_json``'s form."""
        names = {f.name for f in dataclasses.fields(OperatorDeclaration)}
        return cls(
            {
                op: OperatorDeclaration(
                    **{k: tuple(v) if isinstance(v, list) else v for k, v in d.items() if k in names}  # type: ignore[arg-type]
                )
                for op, d in data.items()
            }
        )

    def deviations(self) -> list[str]:
        """Each way the declaration lets results differ from eager PyTorch, one line per operator, in
        declaration order: 'aten::maximum: NaN ignored', 'aten::sqrt: subnormals flushed',
        'aten::mm float32: computed in bfloat16',
        'aten::mm float32: rtol 0.01 atol 0.01' (the report's backend.declared_deviations)."""
        lines = []
        for op, decl in self._ops.items():
            if decl.nan_mode == IGNORE:
                lines.append(f"{op}: NaN ignored")
            if decl.subnormals == FLUSHED:
                lines.append(f"{op}: subnormals flushed")
            lines += [f"{op} {dtype}: computed in {precision}" for dtype, precision in decl.computes_in]
            lines += [_tolerance_line(op, dtype, rtol, atol) for dtype, rtol, atol in decl.tolerances]
        return lines

    def pairs(self) -> list[tuple[str, str]]:
        """Every declared (operator, dtype), in declaration order."""
        return [(op, d) for op, decl in self._ops.items() for d in decl.dtypes]


def quantized_by_backend(descriptor: Any, case: Any) -> bool:
    """Whether corpus case ``case`` is quantized with the backend's own quantizer before it is lowered: a float
    case of an operator the backend declares in quantized patterns (``OperatorSupport.in_quantized_patterns``),
    for a backend whose samples are all quantized (``quantized.every_sample``). The runner (which cases run,
    how they are batched) and the vendor process (``operators/tasks.py``, how a batch is made) both ask this."""
    operators = descriptor.operators
    return (
        descriptor.quantizes_every_sample
        and "quantized" not in case.traits
        and case.op in operators
        and operators[case.op].quantized_only
    )
