"""The operator corpus: every operator with cases, by schema name.

An ``Operator`` names the operator as it appears in the edge program the
partitioner sees (``aten::add.Tensor``; view-like operators have their
``_copy`` form there), the dtypes ATen defines it for, and a function that
gives its cases for one dtype. ``composite`` operators are decomposed by
``to_edge``: a backend that declares one promises that everything it becomes
is delegated. ``kept_whole`` operators reach the partitioner only when its
``ops_to_not_decompose`` keeps them (aten::linear).
"""

from __future__ import annotations

import functools

from conformance.operators.spec import Case, Operator


def normalize(name: str) -> str:
    """'aten::relu.default' -> 'aten::relu' (the default overload's schema name has no suffix)."""
    return name.removesuffix(".default")


@functools.cache
def operators() -> dict[str, Operator]:
    """Every operator of the corpus by schema name, in family order."""
    from conformance.operators.cases import (
        activations,
        elementwise,
        indexing,
        linear_conv,
        pooling,
        quantized,
        reductions,
        shape,
    )

    found: dict[str, Operator] = {}
    for module in (elementwise, activations, reductions, linear_conv, pooling, shape, indexing, quantized):
        for entry in module.OPERATORS:
            if entry.op in found:
                raise ValueError(f"operator {entry.op} appears twice in the corpus")
            found[entry.op] = entry
    return found


@functools.cache
def cases(op: str, dtype: str) -> tuple[Case, ...]:
    """The cases of one operator and dtype (none if the corpus lacks either)."""
    entry = operators().get(normalize(op))
    if entry is None or dtype not in entry.dtypes:
        return ()
    made = tuple(entry.cases(dtype))
    names = [c.name for c in made]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate case names for {op} {dtype}: {names}")
    return made


def case(key: str) -> Case:
    """A case by its key 'op|dtype|name'."""
    op, dtype, name = key.split("|", 2)
    for c in cases(op, dtype):
        if c.name == name:
            return c
    raise KeyError(key)
