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
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping

from conformance.operators.corpus import normalize
from conformance.operators.spec import DTYPES, FLOAT32, TRAITS


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
        object.__setattr__(self, "dtypes", tuple(dict.fromkeys(dtypes)))
        object.__setattr__(self, "without", tuple(sorted(set(without))))


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
    ) -> OperatorSupport:
        declaration = OperatorDeclaration(
            tuple([dtypes] if isinstance(dtypes, str) else dtypes), dynamic, tuple(without), reason
        )
        return cls(dict.fromkeys(ops, declaration))

    @classmethod
    def float32(cls, *ops: str, dynamic: bool = False, without: Iterable[str] = (), reason: str = ""):
        return cls.of((FLOAT32,), *ops, dynamic=dynamic, without=without, reason=reason)

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

    def pairs(self) -> list[tuple[str, str]]:
        """Every declared (operator, dtype), in declaration order."""
        return [(op, d) for op, decl in self._ops.items() for d in decl.dtypes]
