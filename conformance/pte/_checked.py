"""Bounds-checked use of the flatc-generated bindings.

The generated classes trust the buffer: a bad offset makes them raise
``struct.error``/``TypeError``, silently read from the end of the buffer
(negative offsets), return a short string, or loop over a vector that claims
four billion elements. ``FlatView`` validates every table, vtable, field,
string and vector against the flatbuffer's extent *before* the generated code
touches it, and turns anything the generated code still raises into
``PteFormatError``. Loops are bounded because a vector's claimed length is
checked against the bytes that are actually there.

Fields are named by passing the generated accessor (e.g.
``fb.CompileSpec.Value``); its vtable slot is learnt by asking that accessor
(see ``slot_of``), so the layout knowledge stays in the generated code.
"""

from __future__ import annotations

import contextlib
import functools
import struct
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import flatbuffers

from .errors import PteFormatError

T = TypeVar("T")

# What the generated code or the flatbuffers runtime can raise on bad data.
_LOW_LEVEL_ERRORS = (
    struct.error,
    IndexError,
    TypeError,
    ValueError,
    OverflowError,
    RecursionError,
    UnicodeDecodeError,
)


def _get(packer: Any, buf: bytes, offset: int) -> int:
    """One little-endian number via the flatbuffers runtime (caller checked bounds)."""
    return flatbuffers.encode.Get(packer, buf, offset)


class _SlotFound(Exception):
    def __init__(self, slot: int) -> None:
        super().__init__(slot)
        self.slot = slot


class _SlotProbe:
    """Stands in for ``flatbuffers.table.Table``; reports the first vtable slot asked for."""

    __slots__ = ()

    def Offset(self, slot: int) -> int:
        raise _SlotFound(slot)


class _Probed:
    __slots__ = ("_tab",)

    def __init__(self) -> None:
        self._tab = _SlotProbe()


@functools.cache
def slot_of(accessor: Callable[..., Any]) -> int:
    """The vtable slot that a generated field accessor reads.

    Every generated accessor starts with ``self._tab.Offset(slot)``; calling it
    on a probe object captures that number.
    """
    try:
        accessor(_Probed(), *([0] * (accessor.__code__.co_argcount - 1)))
    except _SlotFound as found:
        return found.slot
    raise TypeError(f"{accessor.__qualname__} does not read a vtable slot")


class FlatView:
    """Checked reads of generated objects over ``buf[:end]`` (the flatbuffer part)."""

    def __init__(self, buf: bytes, end: int) -> None:
        self.buf = buf
        self.end = end

    # -- primitives ---------------------------------------------------------

    def _need(self, offset: int, size: int, what: str) -> None:
        if offset < 0 or offset + size > self.end:
            raise PteFormatError(
                f"{what}: {size} bytes at offset {offset} lie outside the flatbuffer data [0, {self.end})",
                offset,
            )

    def u32(self, offset: int, what: str) -> int:
        self._need(offset, 4, what)
        return _get(flatbuffers.packer.uoffset, self.buf, offset)

    @contextlib.contextmanager
    def guard(self, what: str, offset: int) -> Iterator[None]:
        """Translate low-level errors from generated code into PteFormatError."""
        try:
            yield
        except PteFormatError:
            raise
        except _LOW_LEVEL_ERRORS as exc:
            raise PteFormatError(
                f"{what}: malformed flatbuffer data near offset {offset} ({type(exc).__name__}: {exc})",
                offset,
            ) from exc

    # -- tables -------------------------------------------------------------

    def table(self, obj: T, what: str) -> T:
        """Validate the table ``obj`` (position, vtable, inline size); return it."""
        pos = obj._tab.Pos  # type: ignore[attr-defined]
        if pos < 0 or pos + 4 > self.end:
            raise PteFormatError(
                f"{what}: table at offset {pos} out of range (flatbuffer data is {self.end} bytes)",
                pos,
            )
        vtable = pos - _get(flatbuffers.packer.soffset, self.buf, pos)
        if vtable < 0 or vtable + 4 > self.end:
            raise PteFormatError(
                f"{what}: vtable at offset {vtable} out of range for table at offset "
                f"{pos} (flatbuffer data is {self.end} bytes)",
                pos,
            )
        vt_size = _get(flatbuffers.packer.voffset, self.buf, vtable)
        table_size = _get(flatbuffers.packer.voffset, self.buf, vtable + 2)
        if vt_size < 4 or vt_size % 2 or vtable + vt_size > self.end:
            raise PteFormatError(
                f"{what}: vtable at offset {vtable} (of table at offset {pos}) has invalid size {vt_size}",
                vtable,
            )
        if table_size < 4:
            raise PteFormatError(
                f"{what}: vtable at offset {vtable} gives table at offset {pos} an invalid size {table_size}",
                vtable,
            )
        if pos + table_size > self.end:
            raise PteFormatError(
                f"{what}: table at offset {pos} claims {table_size} bytes, past the "
                f"end of the flatbuffer data ({self.end} bytes)",
                pos,
            )
        return obj

    def _field(self, obj: Any, accessor: Callable[..., Any], size: int, what: str) -> int:
        """Absolute offset of a present field of ``size`` bytes, or 0 if absent.

        The field must lie past the table's vtable offset and within the flatbuffer data, the bounds
        FlatBuffers' own verifier holds a field to. The table size its vtable states is not one of them:
        executorch 1.5.1's Python serializer, run with flatbuffers 25.2.10 (the version tosa-tools pins),
        writes program segments whose stated size ends 4 bytes before their 8-byte ``size`` field does,
        and ExecuTorch's runtime loads them."""
        tab = obj._tab
        rel = tab.Offset(slot_of(accessor))  # safe: table() validated the vtable
        if rel == 0:
            return 0
        if rel < 4 or tab.Pos + rel + size > self.end:
            raise PteFormatError(
                f"{what}: field at offset {tab.Pos + rel} ({size} bytes) lies outside the table at offset "
                f"{tab.Pos} and the flatbuffer data ({self.end} bytes)",
                tab.Pos + rel,
            )
        return tab.Pos + rel

    def _target(self, field_pos: int, what: str) -> int:
        """Follow the uoffset stored at ``field_pos``."""
        target = field_pos + self.u32(field_pos, what)
        if target + 4 > self.end:
            raise PteFormatError(
                f"{what}: the reference at offset {field_pos} points to offset {target}, "
                f"past the end of the flatbuffer data ({self.end} bytes)",
                field_pos,
            )
        return target

    # -- fields -------------------------------------------------------------

    def scalar(self, obj: Any, accessor: Callable[[Any], T], size: int, what: str) -> T:
        """Read a scalar field through its generated accessor."""
        pos = self._field(obj, accessor, size, what)
        with self.guard(what, pos or obj._tab.Pos):
            return accessor(obj)

    def sub_table(self, obj: Any, accessor: Callable[[Any], T | None], what: str) -> T | None:
        """Read a table-typed field through its generated accessor; None if absent."""
        pos = self._field(obj, accessor, 4, what)
        if pos == 0:
            return None
        self._target(pos, what)
        with self.guard(what, pos):
            child = accessor(obj)
        return None if child is None else self.table(child, what)

    def vector(
        self, obj: Any, length_accessor: Callable[..., Any], elem_size: int, what: str
    ) -> tuple[int, int]:
        """(start, count) of a vector field; (0, 0) if absent. Extent is validated."""
        pos = self._field(obj, length_accessor, 4, what)
        if pos == 0:
            return 0, 0
        vec = self._target(pos, what)
        count = self.u32(vec, what)
        start = vec + 4
        if count * elem_size > self.end - start:
            raise PteFormatError(
                f"{what}: vector at offset {vec} claims {count} elements of {elem_size} "
                f"bytes, past the end of the flatbuffer data ({self.end} bytes)",
                vec,
            )
        return start, count

    def string(self, obj: Any, accessor: Callable[..., Any], what: str) -> str | None:
        """A string field decoded as UTF-8; None if absent."""
        pos = self._field(obj, accessor, 4, what)
        if pos == 0:
            return None
        start, count = self.vector(obj, accessor, 1, what)
        raw = bytes(self.buf[start : start + count])
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PteFormatError(
                f"{what}: invalid UTF-8 at offset {start + exc.start} (byte {exc.start} "
                f"of the {count}-byte string at offset {start})",
                start + exc.start,
            ) from None

    def tables(
        self,
        obj: Any,
        length_accessor: Callable[..., Any],
        item_accessor: Callable[[Any, int], T],
        what: str,
    ) -> list[T]:
        """The validated elements of a vector-of-tables field (empty if absent)."""
        start, count = self.vector(obj, length_accessor, 4, what)
        items = []
        for j in range(count):
            where = f"{what}[{j}]"
            self._target(start + 4 * j, where)
            with self.guard(where, start + 4 * j):
                item = item_accessor(obj, j)
            items.append(self.table(item, where))
        return items

    def scalars(
        self,
        obj: Any,
        length_accessor: Callable[..., Any],
        item_accessor: Callable[[Any, int], T],
        elem_size: int,
        what: str,
    ) -> tuple[T, ...]:
        """The elements of a vector-of-scalars field, read by the generated accessor."""
        _, count = self.vector(obj, length_accessor, elem_size, what)
        with self.guard(what, obj._tab.Pos):
            return tuple(item_accessor(obj, j) for j in range(count))
