"""The vocabulary of the operator corpus: dtypes, input recipes, tolerances and
cases. Case tables (``conformance.operators.cases.*``) are written with it.

A case is data: the operator it exercises, a dtype, a name unique for that
operator and dtype, the recipes of its inputs (shape, dtype, values, layout),
the traits it stresses, and a ``build`` that makes the module to export. Tensors
are made only in the vendor process, from a seed derived from the case's name,
so every process makes the same inputs.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from typing import Any

#: Every dtype a case may use, by its torch name.
FLOAT32, FLOAT16, BFLOAT16 = "float32", "float16", "bfloat16"
INT8, UINT8, INT32, INT64, BOOL = "int8", "uint8", "int32", "int64", "bool"
DTYPES = (FLOAT32, FLOAT16, BFLOAT16, INT8, UINT8, INT32, INT64, BOOL)
FLOATS = (FLOAT32, FLOAT16, BFLOAT16)
INTS = (INT8, INT32, INT64)
NUMERIC = FLOATS + INTS
ALL = NUMERIC + (BOOL,)

#: Machine epsilon (the gap between 1 and the next value) of each float dtype.
EPS = {FLOAT32: 2.0**-23, FLOAT16: 2.0**-10, BFLOAT16: 2.0**-7}
#: The smallest positive normal value of each float dtype: results below it may be flushed to zero.
TINY = {FLOAT32: 2.0**-126, FLOAT16: 2.0**-14, BFLOAT16: 2.0**-126}

#: Traits a case can stress; a backend may declare it does not support some (OperatorSupport.without).
TRAITS = {
    "rank0": "a 0-dimensional (scalar) tensor",
    "empty": "a tensor with a dimension of size 0",
    "broadcast": "operands of different shapes, broadcast",
    "channels_last": "a 4-D input in channels-last dim order (the only permuted layout the runtime accepts)",
    "stress": "values at the edges: zero, negative zero, large magnitude, near the domain's edge",
    "inf_nan": "infinities and NaN, where the operator defines a result for them",
    "subnormal": "subnormal (denormal) operands, which a backend that flushes them to zero declares "
    "(OperatorDeclaration.subnormals)",
    "large": "a tensor of more than 10^5 elements",
    "quantized": "int8 tensors through dequantize -> operator -> quantize; only for a backend that declares "
    "quantized support and the operator",
    "dynamic": "bounded dynamic dimensions (torch.export.Dim with a max): the program is planned for the bounds and "
    "run below them; only for operators declared dynamic",
}


#: Traits of float cases a quantizer cannot calibrate on (infinities, NaN) or whose values are below any int8
#: step (subnormals): not quantized by a backend's quantizer.
UNQUANTIZABLE = frozenset({"inf_nan", "subnormal"})


def quantizable(c: Case) -> bool:
    """Whether case ``c`` runs quantized by an integer-only backend's quantizer when its operator is declared in
    quantized patterns (``support.quantized_by_backend``): a float case, not dynamic, that a quantizer can
    calibrate on. The runner plans by this rule and ``conformance.released`` counts the corpus by it."""
    return not c.traits & (UNQUANTIZABLE | {"quantized", "dynamic"})


def torch_dtype(name: str):
    import torch

    return getattr(torch, name)


def is_float(dtype: str) -> bool:
    return dtype in EPS


# --------------------------------------------------------------------------- tolerances


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """How far the backend's result may be from eager PyTorch, with the reason.

    rtol = ``ulps`` * eps(dtype); atol = ``abs_ulps`` * eps(dtype) * magnitude + tiny(dtype), where
    the magnitude of a case is 1 unless ``per_term`` is set: then it is the largest result of the
    operator applied to the absolute values of its inputs (computed in float64), and ``abs_ulps`` grows
    by the case's reduction length K (a sum of K terms rounds K times). tiny(dtype), the smallest
    normal value, lets a backend flush subnormal results to zero. Integer and bool results are exact.
    """

    ulps: float
    abs_ulps: float
    why: str
    per_term: bool = False
    #: integer (quantized) results within the descriptor's QuantizedSupport.max_steps of eager PyTorch's
    steps: bool = False

    def bounds(self, dtype: str, magnitude: float = 1.0, reduction: int = 0) -> tuple[float, float]:
        """(rtol, atol) for a result of ``dtype``."""
        if not is_float(dtype):
            return 0.0, 0.0
        eps = EPS[dtype]
        abs_ulps = self.abs_ulps + (reduction if self.per_term else 0)
        return self.ulps * eps, abs_ulps * eps * (magnitude if self.per_term else 1.0) + TINY[dtype]


#: Correctly rounded IEEE operations (add, mul, neg, max, floor...): eager rounds once, so does any
#: conforming backend. One ULP more allows a backend that computes x + alpha*y with two roundings.
ROUNDED = Tolerance(
    2, 0, "one IEEE rounding in both eager and the backend; 2 ULP allow x+alpha*y in two steps"
)
#: Exact operations (copies, comparisons, selections, rounding to integers, integer arithmetic).
EXACT = Tolerance(0, 0, "the result is one of the inputs' values, or an exact integer: no rounding at all")
#: Transcendental functions (exp, log, tanh, sigmoid, gelu...): eager's vectorized kernels are within
#: 1 ULP; libm-quality implementations within 2-3. 4 ULP relative and 4 ULP absolute (results near 0).
TRANSCENDENTAL = Tolerance(4, 4, "eager is within 1 ULP, a libm-quality kernel within 3: 4 ULP rel. and abs.")
#: Compositions of a few rounded steps and one transcendental (silu, elu, hardswish, softplus, log_softmax).
COMPOSITE = Tolerance(8, 8, "a few rounded steps around a transcendental: 8 ULP relative and absolute")
#: Sums of K products or terms (matmul, linear, conv, sum, mean, pooling averages): the worst-case
#: rounding error of a K-term sum is about K ULP of the sum of the terms' magnitudes (Higham, gamma_K);
#: both eager and the backend may reach it in different orders, hence per_term with 2 extra ULP.
ACCUMULATE = Tolerance(
    2, 2, "a K-term sum in any order is within K ULP of the sum of |terms| (gamma_K)", per_term=True
)


# --------------------------------------------------------------------------- inputs


@dataclasses.dataclass(frozen=True)
class Input:
    """One input tensor: shape, dtype, value recipe and layout.

    values: "normal" (standard normal), "positive" (0.05 to 10), "unit" (-0.99 to 0.99), "stress"
    (the dtype's edge values, finite; "stress:moderate" with large magnitudes of a sixteenth of the
    dtype's maximum, "stress:positive" without negatives), "special" (stress plus inf, -inf, NaN), "distinct" (a random
    permutation of distinct values, for selections with no ties), "subnormal" (subnormal values of the dtype
    with a few normal ones; "subnormal:positive" without negatives), "pow2" (powers of two large and small
    enough to scale a subnormal into the normal range, both signs), "index:N" (integers 0..N-1),
    "mask" (random bools), "range:LO:HI" (uniform in [LO, HI)).
    """

    shape: tuple[int, ...]
    dtype: str = FLOAT32
    values: str = "normal"
    channels_last: bool = False
    #: a constant of the module (a weight) rather than an input of the program
    constant: bool = False
    #: (dimension, upper bound) of each dynamic dimension: exported as torch.export.Dim(max=bound), the same Dim
    #: for the same dimension of every input of the case; ``shape`` is the size the case runs at
    dynamic: tuple[tuple[int, int], ...] = ()

    def describe(self) -> str:
        dims = "x".join(str(d) for d in self.shape) or "scalar"
        extra = ", channels-last" if self.channels_last else ""
        if self.dynamic:
            extra += ", dynamic " + ", ".join(f"dim {d} <= {bound}" for d, bound in self.dynamic)
        kind = " constant" if self.constant else ""
        return f"{self.dtype}[{dims}]{kind} {self.values}{extra}"

    def make(self, generator) -> Any:
        import torch

        dtype = torch_dtype(self.dtype)
        n = 1
        for d in self.shape:
            n *= d
        kind, _, arg = self.values.partition(":")
        if kind == "index":
            t = torch.randint(0, int(arg), self.shape, generator=generator, dtype=torch.int64).to(dtype)
        elif kind == "mask" or self.dtype == BOOL:
            t = torch.rand(self.shape, generator=generator) < 0.5
        elif kind == "distinct":
            t = (torch.randperm(n, generator=generator).reshape(self.shape) - n // 2).to(torch.float64)
            t = t if not is_float(self.dtype) else t * 0.25
            t = t.to(dtype)
        elif kind in ("stress", "special"):
            pool = _stress_pool(self.dtype, special=kind == "special", moderate=arg == "moderate")
            if arg == "positive":
                pool = pool.abs()[pool.abs() > 0] if is_float(self.dtype) else pool.abs()[pool > 0]
            t = pool[torch.randint(0, len(pool), self.shape, generator=generator)]
        elif kind in ("subnormal", "pow2") and is_float(self.dtype):
            pool = _subnormal_pool(self.dtype) if kind == "subnormal" else _pow2_pool(self.dtype)
            if arg == "positive":
                pool = pool[pool > 0]
            t = pool[torch.randint(0, len(pool), self.shape, generator=generator)]
        elif not is_float(self.dtype):
            lo, hi = _int_range(self.dtype, kind, arg)
            t = torch.randint(lo, hi, self.shape, generator=generator, dtype=torch.int64).to(dtype)
        else:
            if kind == "positive":
                t = torch.rand(self.shape, generator=generator, dtype=torch.float64) * 9.95 + 0.05
            elif kind == "unit":
                t = torch.rand(self.shape, generator=generator, dtype=torch.float64) * 1.98 - 0.99
            elif kind == "range":
                flo, fhi = (float(v) for v in arg.split(":"))
                t = torch.rand(self.shape, generator=generator, dtype=torch.float64) * (fhi - flo) + flo
            else:
                t = torch.randn(self.shape, generator=generator, dtype=torch.float64)
            t = t.to(dtype)
        if self.channels_last:
            t = t.contiguous(memory_format=torch.channels_last)
        return t


def _int_range(dtype: str, kind: str, arg: str) -> tuple[int, int]:
    if kind == "range":
        lo, hi = (int(float(v)) for v in arg.split(":"))
        return lo, hi
    if kind == "positive":
        return 1, 100
    return (-100, 100) if dtype != UINT8 else (0, 200)


def _subnormal_pool(dtype: str):
    """Subnormal values of ``dtype`` (half and an eighth of the smallest normal, the smallest subnormal and
    three times it), both signs, with 1 and -0.5 beside them."""
    import torch

    info = torch.finfo(torch_dtype(dtype))
    tiny = float(info.tiny)
    least = tiny * float(info.eps)  # the smallest subnormal: the smallest normal's last mantissa bit
    magnitudes = [tiny / 2, tiny / 8, least, 3 * least]
    return torch.tensor([*magnitudes, *(-m for m in magnitudes), 1.0, -0.5], dtype=torch.float64).to(
        torch_dtype(dtype)
    )


def _pow2_pool(dtype: str):
    """Powers of two that scale a subnormal of ``dtype`` into the normal range (2**e and 2**-e, both signs,
    e as large as the dtype's range allows up to 60), and 1."""
    import math

    import torch

    info = torch.finfo(torch_dtype(dtype))
    e = min(60, int(math.log2(float(info.max))) - 1)
    return torch.tensor([2.0**e, -(2.0**e), 2.0**-e, -(2.0**-e), 1.0], dtype=torch.float64).to(
        torch_dtype(dtype)
    )


def _stress_pool(dtype: str, special: bool, moderate: bool = False):
    """The edge values of ``dtype``; ``moderate``: the large magnitudes a quarter of what they are otherwise,
    for operators whose eager evaluation overflows an intermediate (hardswish's x * 6) where the result
    itself is finite, which a backend need not reproduce."""
    import torch

    t = torch_dtype(dtype)
    if not is_float(dtype):
        iinfo = torch.iinfo(t)
        # Large magnitudes that no sum or difference of two of them overflows.
        ints = [0, 1, -1, iinfo.max // 2, iinfo.min // 2 + 1, iinfo.max // 3, 7, -7]
        if dtype == UINT8:
            ints = [0, 1, 2, 100, 127, 64, 7]
        return torch.tensor(ints, dtype=t)
    info = torch.finfo(t)
    big = float(info.max) / (16 if moderate else 4)
    values = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        float(info.tiny) * 4,
        -float(info.tiny) * 4,
        big,
        -big,
        1e-3,
        -2.5,
        float(info.eps),
        3.0e3 if dtype == FLOAT16 else 1.0e8,
    ]
    if special:
        values += [float("inf"), float("-inf"), float("nan")]
    return torch.tensor(values, dtype=t)


# --------------------------------------------------------------------------- cases


@dataclasses.dataclass(frozen=True)
class Case:
    """One operator case. ``build(inputs)`` returns the module whose forward takes the program
    inputs (the non-constant ones, in order) and returns the operator's result(s); constants are
    handed to ``build`` so it can make them parameters or buffers of the module."""

    op: str
    dtype: str
    name: str
    inputs: tuple[Input, ...]
    build: Callable[[list[Any]], Any] = dataclasses.field(repr=False, compare=False)
    tolerance: Tolerance = EXACT
    traits: frozenset[str] = frozenset()
    #: K, the length of the sums one result element needs (ACCUMULATE tolerances)
    reduction: int = 0
    #: what the operator is called with besides its tensors, for messages ("dim=1, keepdim=True")
    args: str = ""
    #: other operators the backend must declare for the case to run (the float operator of a quantized case)
    requires: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.op}|{self.dtype}|{self.name}"

    def describe(self) -> str:
        shapes = ", ".join(i.describe() for i in self.inputs)
        args = f"; {self.args}" if self.args else ""
        return f"{self.op} {self.dtype} case {self.name!r} ({shapes}{args})"

    def seed(self) -> int:
        return int.from_bytes(hashlib.sha256(self.key.encode()).digest()[:8], "little") & (2**63 - 1)

    def dynamic_shapes(self, tag: str) -> list[dict[int, Any] | None]:
        """torch.export's dynamic_shapes entry of each program input (None: static); one Dim per dynamic
        dimension index, named ``tag`` + the index, shared by the inputs that make it dynamic."""
        import torch

        dims: dict[int, Any] = {}
        specs: list[dict[int, Any] | None] = []
        for i in self.inputs:
            if i.constant:
                continue
            for d, bound in i.dynamic:
                dims.setdefault(d, torch.export.Dim(f"{tag}_d{d}", max=bound))
            specs.append({d: dims[d] for d, _ in i.dynamic} or None)
        return specs

    def make(self) -> tuple[Any, list[Any]]:
        """(module in eval mode, program inputs), deterministic for the case."""
        import torch

        generator = torch.Generator().manual_seed(self.seed())
        tensors = [i.make(generator) for i in self.inputs]
        module = self.build(tensors).eval()
        return module, [t for t, i in zip(tensors, self.inputs) if not i.constant]


class Fn:
    """A module whose forward calls ``fn(*inputs, *constants)``; constants become buffers."""

    def __new__(cls, fn: Callable, constants: Sequence[Any] = ()):
        import torch

        class _Op(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.count = len(constants)
                for k, c in enumerate(constants):
                    if c.is_floating_point():
                        self.register_parameter(f"c{k}", torch.nn.Parameter(c, requires_grad=False))
                    else:
                        self.register_buffer(f"c{k}", c)

            def forward(self, *xs):
                return fn(*xs, *(getattr(self, f"c{k}") for k in range(self.count)))

        return _Op()


def call(fn: Callable) -> Callable[[list[Any]], Any]:
    """``build`` for a case whose inputs are all program inputs: forward(*xs) = fn(*xs)."""
    return lambda tensors: Fn(fn)


def with_constants(fn: Callable, inputs: Sequence[Input]) -> Callable[[list[Any]], Any]:
    """``build`` for a case whose constant inputs (weights) become buffers: forward(*xs) = fn(*xs, *constants)
    with the program inputs first and the constants after them, each group in declaration order."""

    def build(tensors: list[Any]):
        constants = [t for t, i in zip(tensors, inputs) if i.constant]
        return Fn(fn, constants)

    return build


@dataclasses.dataclass(frozen=True)
class Operator:
    """One operator of the corpus: its schema name, family, dtypes and case generator (one per table)."""

    op: str
    family: str
    dtypes: tuple[str, ...]
    cases: Callable[[str], list[Case]] = dataclasses.field(repr=False, compare=False)
    #: decomposed by to_edge; every node it becomes must land in the delegate
    composite: bool = False
    #: reaches the partitioner only if ops_to_not_decompose keeps it
    kept_whole: bool = False
    note: str = ""
