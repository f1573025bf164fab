"""The descriptor's fields, each declared once, in its dataclass (``conformance.descriptor``).

A field's *kind* (``dataclasses.field`` metadata under ``KIND``) says everything the suite needs
besides its name and default: how its value crosses from the vendor process to the process that judges
(``encode`` there, ``decode`` here: the descriptor's JSON form), what a valid value is (``problem``), and
for an optional support class whether it is a *capability* (conditional checks apply only when it is
set). The walkers below derive the JSON form (``to_json``, ``from_json``), the validation
(``problems``) and the capability list (``capabilities``, ``capability_absent``) from the dataclass
fields, so adding an optional field is one line in its dataclass:

    my_field: float | None = data(float, default=None)           # plain data, sent as is
    my_hook: Callable[[], Any] | None = code(optional=True)       # vendor code: runs only in the vendor process
    my_support: MySupport | None = capability(MySupport, "my support")   # a capability (C-MY-* apply)

A field without a kind (a vendor subclass's own) is the vendor's business: it never crosses.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

#: The metadata key holding a field's kind.
KIND = "conformance.kind"

#: How a kind calls the vendor's code in the vendor process: call(what, fn) -> fn(), or raises with a
#: one-line message naming what raised ('runtime_libraries() raised TypeError: ...').
Call = Callable[[str, Callable[[], Any]], Any]


class Kind:
    """How one field crosses the process boundary and what a valid value is."""

    def encode(self, value: Any, path: str, call: Call) -> Any:
        """The JSON form of ``value`` (in the vendor process)."""
        raise NotImplementedError

    def decode(self, data: Any, path: str) -> Any:
        """The value rebuilt from its JSON form (in the process that judges)."""
        raise NotImplementedError

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` (a phrase after the field's path and value), or None."""
        return None


def _typename(value: Any) -> str:
    return type(value).__name__


def _is(value: Any, kind: type) -> bool:
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


@dataclasses.dataclass(frozen=True)
class Data(Kind):
    """Plain data: a str, bool, int or float (``of``), or a frozenset/tuple of ``items``; sent as is (sets
    as sorted lists). ``positive``: a number above zero. ``sample``: names one of ``sample_models``."""

    of: type
    items: type | None = None
    optional: bool = False
    positive: bool = False
    sample: bool = False

    def encode(self, value: Any, path: str, call: Call) -> Any:
        if value is None:
            return None
        if self.of is frozenset:
            return sorted(value)
        if self.of is tuple:
            return list(value)
        return float(value) if self.of is float else value

    def decode(self, data: Any, path: str) -> Any:
        if data is None or self.of not in (frozenset, tuple):
            return data
        return self.of(data)

    def problem(self, value: Any) -> str | None:
        if value is None:
            return None if self.optional else f"is None, not a {self.of.__name__}"
        if self.of in (frozenset, tuple):
            items = self.items.__name__ if self.items is not None else "values"
            if not isinstance(value, (set, frozenset, tuple, list)):
                return f"is {_shown(value)}, a {_typename(value)}, not a {self.of.__name__} of {items}"
            bad = [x for x in value if self.items is not None and not _is(x, self.items)]
            if bad:
                return f"holds {_shown(bad[0])}, a {_typename(bad[0])}, not a {items}"
            return None
        if not _is(value, self.of):
            return f"is {_shown(value)}, a {_typename(value)}, not a{'n' if self.of is int else ''} {self.of.__name__}"
        if self.positive and value <= 0:
            return f"must be positive, not {value!r}"
        return None


def _refuse(what: str) -> Callable[..., Any]:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError(f"{what} is the vendor's code: it runs only in the vendor process (a suite bug)")

    return refuse


@dataclasses.dataclass(frozen=True)
class Code(Kind):
    """The vendor's callable: it runs only in the vendor process. Sent as whether it is set; rebuilt as
    a stand-in that refuses to run (the checks reach the vendor's code through the Context)."""

    optional: bool = False

    def encode(self, value: Any, path: str, call: Call) -> Any:
        return value is not None

    def decode(self, data: Any, path: str) -> Any:
        return _refuse(f"{path}()") if data else None

    def problem(self, value: Any) -> str | None:
        if value is None and self.optional:
            return None
        return (
            None
            if callable(value)
            else f"is {_shown(value)}, a {_typename(value)}, not callable"
            + (" or None" if self.optional else "")
        )


class RecordedError(Exception):
    """What the vendor's code raised in the vendor process, kept as text ('TypeError: ...')."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


@dataclasses.dataclass(frozen=True)
class Listing(Code):
    """The vendor's callable returning paths: called in the vendor process while the descriptor is read,
    its result (or what it raised) sent as data; rebuilt as a function returning that result (or raising
    a RecordedError with what it raised)."""

    def encode(self, value: Any, path: str, call: Call) -> Any:
        try:
            listed = call(f"{path}()", value)
        except Exception as exc:  # noqa: BLE001  the vendor's code raised: kept as text
            return {"items": [], "error": str(exc)}
        try:
            return {"items": [str(p) for p in listed], "error": None}
        except TypeError:
            return {"items": [], "error": f"{path}() returned something that is not a sequence of paths"}

    def decode(self, data: Any, path: str) -> Any:
        from pathlib import Path

        def listing() -> list[Path]:
            if data["error"]:
                raise RecordedError(data["error"].removeprefix(f"{path}() raised "))
            return [Path(p) for p in data["items"]]

        return listing


@dataclasses.dataclass(frozen=True)
class Nested(Kind):
    """An instance of a support dataclass (``cls``), or None when ``optional``. With ``capability`` (a
    label, 'named data support'), setting it declares the capability named by the field."""

    cls: type
    optional: bool = True
    capability: str | None = None

    def encode(self, value: Any, path: str, call: Call) -> Any:
        return None if value is None else to_json(value, path, call)

    def decode(self, data: Any, path: str) -> Any:
        return None if data is None else from_json(self.cls, data, path)

    def problem(self, value: Any) -> str | None:
        if value is None:
            return None if self.optional else f"is None, not a {self.cls.__name__}"
        if isinstance(value, self.cls):
            return None
        return f"is {_shown(value)}, a {_typename(value)}, not a {self.cls.__name__}"


@dataclasses.dataclass(frozen=True)
class Records(Kind):
    """A tuple of instances of ``cls``, at least ``at_least``, their ``name`` fields unique."""

    cls: type
    at_least: int = 0

    def encode(self, value: Any, path: str, call: Call) -> Any:
        return [to_json(item, f"{path}[{i}]", call) for i, item in enumerate(value)]

    def decode(self, data: Any, path: str) -> Any:
        return tuple(from_json(self.cls, item, f"{path}[{i}]") for i, item in enumerate(data))

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, (tuple, list)):
            return f"is {_shown(value)}, a {_typename(value)}, not a tuple of {self.cls.__name__}"
        if len(value) < self.at_least:
            return f"declares none; the suite needs at least {self.at_least}"
        names = [getattr(x, "name", None) for x in value]
        if len(set(names)) != len(names):
            return f"has duplicate names: {names}"
        return None


@dataclasses.dataclass(frozen=True)
class Custom(Kind):
    """A value with a JSON form of its own: ``to`` and ``back`` convert it, ``check`` validates it."""

    to: Callable[[Any], Any]
    back: Callable[[Any], Any]
    check: Callable[[Any], str | None] = lambda _value: None

    def encode(self, value: Any, path: str, call: Call) -> Any:
        return self.to(value)

    def decode(self, data: Any, path: str) -> Any:
        return self.back(data)

    def problem(self, value: Any) -> str | None:
        return self.check(value)


# --------------------------------------------------------------------------- declaring fields


def _field(kind: Kind, default: Any) -> Any:
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata={KIND: kind})
    return dataclasses.field(default=default, metadata={KIND: kind})


def data(
    of: type,
    *,
    items: type | None = None,
    default: Any = dataclasses.MISSING,
    positive: bool = False,
    sample: bool = False,
) -> Any:
    """A plain-data field (None allowed when the default is None)."""
    return _field(Data(of, items, default is None, positive, sample), default)


def sample_name() -> Any:
    """A field naming one of the descriptor's ``sample_models``."""
    return data(str, sample=True)


def code(*, optional: bool = False, default: Any = dataclasses.MISSING) -> Any:
    """A field holding the vendor's callable (None allowed when ``optional``)."""
    return _field(Code(optional), None if optional and default is dataclasses.MISSING else default)


def listing(*, default: Any) -> Any:
    """A callable of the vendor's returning paths, read once in the vendor process."""
    return _field(Listing(), default)


def records(cls: type, *, at_least: int = 0, default: Any = ()) -> Any:
    """A tuple of ``cls`` instances with unique names."""
    return _field(Records(cls, at_least), default)


def capability(cls: type, label: str) -> Any:
    """An optional support class whose presence declares the capability named by the field; ``label``
    says what it is in the reason of a check it exempts ('named data support')."""
    return _field(Nested(cls, True, label), None)


def custom(to: Callable[[Any], Any], back: Callable[[Any], Any], check=None, *, default: Any) -> Any:
    """A field with a JSON form of its own."""
    return _field(Custom(to, back, check or (lambda _v: None)), default)


# --------------------------------------------------------------------------- walking them


def kinded(cls_or_obj: Any) -> list[tuple[dataclasses.Field, Kind]]:
    """The fields of a descriptor dataclass (or instance) that have a kind, in order."""
    return [(f, f.metadata[KIND]) for f in dataclasses.fields(cls_or_obj) if KIND in f.metadata]


def to_json(obj: Any, path: str, call: Call) -> dict[str, Any]:
    """``obj``'s fields in their JSON form (in the vendor process; ``call`` runs the vendor's code)."""
    prefix = f"{path}." if path else ""
    return {f.name: kind.encode(getattr(obj, f.name), f"{prefix}{f.name}", call) for f, kind in kinded(obj)}


def from_json(cls: type, data: dict[str, Any], path: str = "") -> Any:
    """A ``cls`` rebuilt from ``to_json``'s form (keys it does not know are left out)."""
    prefix = f"{path}." if path else ""
    return cls(
        **{
            f.name: kind.decode(data[f.name], f"{prefix}{f.name}")
            for f, kind in kinded(cls)
            if f.name in data
        }
    )


def problems(obj: Any, path: str = "", samples: list[Any] | None = None) -> list[str]:
    """'PATH PROBLEM' (the problem naming the value) for every field of ``obj`` (and of its support classes) that is not valid;
    ``samples``: the sample names a ``sample_name`` field may take (default: ``obj``'s own)."""
    if samples is None:
        samples = [getattr(m, "name", None) for m in getattr(obj, "sample_models", ()) or ()]
    found = []
    prefix = f"{path}." if path else ""
    for f, kind in kinded(obj):
        value = getattr(obj, f.name)
        where = f"{prefix}{f.name}"
        wrong = kind.problem(value)
        if wrong is not None:
            found.append(f"{where} {wrong}")
            continue
        if isinstance(kind, Data) and kind.sample and value not in samples:
            found.append(f"{where} {value!r} is not one of the sample_models {samples}")
        elif isinstance(kind, Nested) and value is not None:
            found += problems(value, where, samples)
        elif isinstance(kind, Records):
            for i, item in enumerate(value):
                if not isinstance(item, kind.cls):
                    found.append(f"{where}[{i}] is a {_typename(item)}, not a {kind.cls.__name__}")
                else:
                    found += problems(item, f"{where}[{i}] ({getattr(item, 'name', '?')!r})", samples)
    return found


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def capabilities(obj: Any) -> list[str]:
    """The capability fields of ``obj`` that are set, in field order."""
    return [
        f.name
        for f, kind in kinded(obj)
        if isinstance(kind, Nested) and kind.capability and getattr(obj, f.name) is not None
    ]


def capability_absent(cls: type) -> dict[str, str]:
    """Capability field -> the reason a conditional check gives when the descriptor does not set it."""
    return {
        f.name: f"the descriptor declares no {kind.capability} ({f.name} is None)"
        for f, kind in kinded(cls)
        if isinstance(kind, Nested) and kind.capability
    }
