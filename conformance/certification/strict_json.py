"""The JSON of a file a user gives (a report, an envelope, a baseline), read defensively: at most
``MAX_READ_BYTES`` (``conformance.input_files.read_bounded``), UTF-8, one JSON value (or one JSON Lines
value), with no duplicate key, no NaN or Infinity and no number that overflows a double. ``Unreadable``
says why a file is not that."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from conformance.byte_sizes import byte_size
from conformance.input_files import FileTooLarge, NotARegularFile, read_bounded

#: verify and badge read at most this many bytes of a file.
MAX_READ_BYTES = 64 * 1024 * 1024


class Unreadable(ValueError):
    """The file cannot be a report (too large, not UTF-8, not JSON, ...); the message says why."""


def read_json(path: str | Path, max_bytes: int = MAX_READ_BYTES) -> Any:
    """The JSON value in ``path``, read only if it is at most ``max_bytes`` long."""
    try:
        data = read_bounded(path, max_bytes)
    except FileTooLarge as exc:
        told = f"is {byte_size(exc.size)}" if exc.size is not None else "holds"
        raise Unreadable(f"{told}, more than the {byte_size(max_bytes)} verify reads; not read") from None
    except NotARegularFile as exc:
        raise Unreadable(str(exc).removeprefix(f"{path} ")) from None
    except OSError as exc:
        raise Unreadable(f"cannot be read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].lstrip().startswith("{") and lines[0].rstrip().endswith("}"):
        try:  # JSON Lines (an .intoto.jsonl file): one value per line
            values = [loads_strict(line) for line in lines]
        except _DuplicateKey as exc:
            raise Unreadable(f"is not JSON this tool reads: {exc}") from None
        except (ValueError, RecursionError):
            values = None
        if values is not None:
            if len(values) != 1:
                raise Unreadable(f"holds {len(values)} JSON lines; verify takes one report or one envelope")
            return values[0]
    try:
        return loads_strict(text)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:
        raise Unreadable(f"is not JSON this tool reads: {exc}") from None
    except RecursionError:
        raise Unreadable("is not JSON this tool reads: nested too deeply") from None


class _DuplicateKey(ValueError):
    pass


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = {}
    for key, value in pairs:
        if key in obj:  # parsers disagree on which one wins: refuse, do not pick
            raise _DuplicateKey(f"key {key!r} appears twice in one object")
        obj[key] = value
    return obj


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses as inf, which JSON cannot hold
        raise ValueError(f"the number {text[:40]} is too large for a double")
    return value


def loads_strict(text: str | bytes) -> Any:
    """json.loads, refusing duplicate keys, NaN/Infinity and numbers that overflow to infinity
    (ValueError, RecursionError)."""
    return json.loads(text, object_pairs_hook=_object, parse_constant=_constant, parse_float=_finite)
