"""The vendor's expectations file: checks expected to fail or declared not
applicable, each with a reason (TOML)::

    [expected_failures]
    "RT-3" = "int8 numerics differ by one ulp; fixed in 2.1"

    [not_applicable]
    "RT-*" = "this host has no runtime library for the backend"

Keys are check IDs or fnmatch patterns of them.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


#: The largest expectations file read (a real one is a few hundred bytes).
MAX_BYTES = 1024 * 1024


class ExpectationsError(ValueError):
    """The expectations file is malformed."""


@dataclasses.dataclass(frozen=True)
class Expectations:
    expected_failures: dict[str, str] = dataclasses.field(default_factory=dict)
    not_applicable: dict[str, str] = dataclasses.field(default_factory=dict)

    def expected_failure(self, check_id: str) -> str | None:
        return _match(self.expected_failures, check_id)

    def declared_not_applicable(self, check_id: str) -> str | None:
        return _match(self.not_applicable, check_id)


def _match(table: dict[str, str], check_id: str) -> str | None:
    for pattern, reason in table.items():
        if fnmatch.fnmatchcase(check_id, pattern):
            return reason
    return None


def load_expectations(path: str | Path | None, known_ids: list[str]) -> Expectations:
    """Reads and validates ``path``; every entry needs a reason and must match a check."""
    if path is None:
        return Expectations()
    from conformance.input_files import FileTooLarge, NotARegularFile, read_bounded

    try:
        raw = read_bounded(path, MAX_BYTES)
    except FileTooLarge:
        raise ExpectationsError(
            f"expectations file {path} is larger than {MAX_BYTES // 1024} KiB; not read"
        ) from None
    except NotARegularFile as exc:
        raise ExpectationsError(f"expectations file {exc}; give the TOML file") from None
    except OSError as exc:
        raise ExpectationsError(f"cannot read expectations file {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ExpectationsError(
            f"expectations file {path} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "it must be a TOML file"
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExpectationsError(f"expectations file {path} is not valid TOML: {exc}") from None
    unknown_sections = set(data) - {"expected_failures", "not_applicable"}
    if unknown_sections:
        raise ExpectationsError(
            f"{path}: unknown sections {sorted(unknown_sections)}; use [expected_failures] and [not_applicable]"
        )
    tables = {}
    for section in ("expected_failures", "not_applicable"):
        table = data.get(section, {})
        if not isinstance(table, dict):
            raise ExpectationsError(
                f"{path}: {section} must be a table ([{section}]), not a {type(table).__name__}"
            )
        for pattern, reason in table.items():
            if not isinstance(reason, str) or not reason.strip():
                raise ExpectationsError(
                    f"{path}: [{section}] {pattern!r} needs a reason (a non-empty string)"
                )
            if not any(fnmatch.fnmatchcase(i, pattern) for i in known_ids):
                raise ExpectationsError(
                    f"{path}: [{section}] {pattern!r} matches no check (see executorch-conformance list)"
                )
        tables[section] = dict(table)
    both = [
        i for i in known_ids if _match(tables["expected_failures"], i) and _match(tables["not_applicable"], i)
    ]
    if both:
        raise ExpectationsError(f"{path}: {both} are both expected to fail and not applicable")
    return Expectations(**tables)
