"""Sizes in bytes as people write and read them: the suite's one formatter and one parser.

Hand-written, though humanfriendly does both: the vendor process imports modules that use them (the
large-weights program, the lowering cache), and it runs with only torch, executorch and the kit
installed; a dependency here would be one more for every vendor's environment.
"""

from __future__ import annotations

import re

_SCALES = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?:([kmg])i?)?b?\s*", re.IGNORECASE)


def byte_size(n: int) -> str:
    """``n`` bytes as a person reads them, in binary units with at most two decimals: '12 bytes',
    '1.5 KiB', '64 MiB', '4.25 GiB'."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.2f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{n} bytes"


def parse_bytes(text: str) -> int:
    """The bytes ``text`` names: '4096', '16MiB', '2 GiB', '2G', '512m', '1.5K' (K, M and G are binary; 'iB'
    and 'B' may follow); ValueError naming the text for anything else, a negative number included."""
    match = _SIZE.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not a size in bytes (such as 4096, 16MiB or 2G)")
    number, unit = match.group(1), (match.group(2) or "").lower()
    value = float(number) * _SCALES[unit] if "." in number else int(number) * _SCALES[unit]
    return int(value)
