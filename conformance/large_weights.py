"""The size of NDATA-5's program: named data that crosses a 32-bit offset boundary (C-NDATA-5).

The program is ``LAYERS`` linears without bias over one input of ``COLUMNS`` features, each weight
``boundary / 16`` bytes of float32, one output per linear. Lowered with the backend's named-data
partitioners, its weights fill ``17/16 * boundary`` bytes of the .ptd: whatever order the backend stores
them in, with equal sizes the last one starts at or past ``boundary``, and every offset of it needs more
than ``log2(boundary)`` bits. At the default boundary of 2^32 a runtime that keeps an offset or a size of
the named data in 32 bits (signed or not) reads the wrong bytes; at 2^31 only one that keeps it signed.

The boundary is 2^32 unless the machine cannot hold the program (``needed_bytes``: the vendor process
holds the eager weights, the exported copy and the backend's serialized copy at once), when it scales
down to 2^31 and the check says so; below that the check cannot run. ``EXECUTORCH_CONFORMANCE_LARGE_
WEIGHTS`` sets a smaller boundary for a quick run (the suite's own tests use 16 MiB); the result then says
that it proves nothing about 32-bit offsets. A certifier leaves it unset.

Imports nothing of the suite but ``outcomes``: the judge and the vendor process both read it.
"""

from __future__ import annotations

import dataclasses
import os

from conformance.byte_sizes import byte_size, parse_bytes

#: The variable that sets a smaller boundary ("16MiB", "2GiB", or bytes); unset: 2^32.
ENV = "EXECUTORCH_CONFORMANCE_LARGE_WEIGHTS"
#: Linears of the program; the first 16 fill the boundary, the 17th lies past it.
LAYERS = 17
#: Input features of every linear (a weight is ROWS x COLUMNS float32).
COLUMNS = 4096
#: The boundary a certifier's run crosses, and the one a machine too small for it crosses instead.
FULL_BOUNDARY = 1 << 32
SIGNED_BOUNDARY = 1 << 31
#: The smallest boundary the variable may set (4 rows per weight) and the largest (8 GiB).
MIN_BOUNDARY = 1 << 20
MAX_BOUNDARY = 1 << 33
#: Memory the lowering takes, per byte of weights, and the vendor process's own (torch, executorch)
#: besides. A backend that keeps ExecuTorch's deep copy of each subgraph for preprocess was measured at 3.2
#: (the reference backend, before it shared the weights with that copy: now about 2).
PEAK_PER_WEIGHT_BYTE = 3.5
BASE_BYTES = 1 << 30


class SizeError(ValueError):
    """The variable's value is not a boundary this check can use; the message says which are."""


@dataclasses.dataclass(frozen=True)
class Size:
    """One run's program: the boundary its named data crosses and the rows of each weight."""

    boundary: int
    #: why it is not 2^32, or None
    scaled: str | None = None

    @property
    def rows(self) -> int:
        return self.boundary // (16 * 4 * COLUMNS)

    @property
    def weight_bytes(self) -> int:
        return self.rows * COLUMNS * 4

    @property
    def total_bytes(self) -> int:
        return LAYERS * self.weight_bytes

    @property
    def needed_bytes(self) -> int:
        return needed_bytes(self.boundary)

    def proves(self) -> str:
        """What a pass at this size shows about offsets into the named data."""
        if self.boundary >= FULL_BOUNDARY:
            return "no offset or size of the named data is kept in 32 bits"
        if self.boundary >= SIGNED_BOUNDARY:
            return (
                "no offset of the named data is kept in a signed 32-bit integer (unsigned 32 bits unjudged)"
            )
        return "nothing about 32-bit offsets (the path of large named data only)"


def needed_bytes(boundary: int) -> int:
    """Memory the vendor process needs to make and lower the program of ``boundary``."""
    return int(PEAK_PER_WEIGHT_BYTE * LAYERS * boundary / 16) + BASE_BYTES


def show_boundary(n: int) -> str:
    """A boundary as 2^k from 1 GiB (the offsets' bits), else in MiB."""
    return f"2^{n.bit_length() - 1}" if n >= 1 << 30 else byte_size(n)


def parse(text: str) -> int:
    """The boundary ``text`` names ("16MiB", "2 GiB", "4294967296"); SizeError otherwise."""
    try:
        value = parse_bytes(text)
    except ValueError:
        raise SizeError(
            f"{ENV}={text!r} is not a size: give a power of two from 1MiB to 8GiB, such as 16MiB or 4GiB"
        ) from None
    if value & (value - 1) or not MIN_BOUNDARY <= value <= MAX_BOUNDARY:
        raise SizeError(f"{ENV}={text!r} is {value} bytes: give a power of two from 1MiB to 8GiB")
    return value


def choose(available: int | None, environ: dict[str, str] | None = None) -> Size:
    """The size of this run: the variable's boundary if set, else 2^32, or 2^31 if ``available`` bytes of
    memory cannot hold 2^32. SizeError if the variable is wrong or the machine cannot hold 2^31 either."""
    env = os.environ if environ is None else environ
    if env.get(ENV):
        boundary = parse(env[ENV])
        size = Size(boundary, scaled=f"{ENV}={env[ENV]}" if boundary < FULL_BOUNDARY else None)
    else:
        size = Size(FULL_BOUNDARY)
    if available is None or size.needed_bytes <= available:
        return size
    if size.boundary > SIGNED_BOUNDARY and needed_bytes(SIGNED_BOUNDARY) <= available:
        return Size(
            SIGNED_BOUNDARY,
            scaled=f"this machine leaves {byte_size(available)} for the vendor process; {show_boundary(size.boundary)} needs "
            f"{byte_size(size.needed_bytes)}",
        )
    raise SizeError(
        f"the program crossing {show_boundary(size.boundary)} needs {byte_size(size.needed_bytes)} of memory and this machine "
        f"leaves {byte_size(available)} for the vendor process; run on a larger machine (a certifier's crosses 2^32: "
        f"{byte_size(needed_bytes(FULL_BOUNDARY))}), or set {ENV} to a smaller power of two for a quick run"
    )
