"""A backend's acceptance rules: which blobs each of its runtime versions accepts, as data the vendor
ships (a JSON file the descriptor's ``acceptance`` field points to), and the verdict they give.

The file (``schema`` 1)::

    {"schema": 1, "backend_id": "ReferenceBackend", "distribution": "executorch-reference-backend",
     "runtimes": {
       "0.2.0": {"header_formats": [1, 2], "blob_format_major": 1, "blob_format_minors": [0, 2],
                 "current_format_since": "0.2.0",
                 "executorch": ">=1.1",
                 "refused_on": {"<1.1": "why the runtime library does not work on those releases"}}}}

``header_formats`` and ``blob_format_minors`` are inclusive ranges; a blob whose minor is below the
newest one runs with a re-export recommendation. ``executorch`` is the PEP 440 range of ExecuTorch
runtimes the runtime library is declared to run on; ``refused_on`` maps ranges it is declared not to
work on to the reason. A release in neither is not covered by the rules (unknown, never a guess).

``judge_blob(blob, rule, executorch)`` is the runtime's verdict as the contract kit computes it
(``backend_kit.header.judge``, the same one-line message the runtime logs), with the header format
range of the rule applied first, as a runtime that reads fewer header formats than the kit does.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import jsonschema
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from backend_kit.header import (
    INCOMPATIBLE,
    Judgement,
    RuntimeVersions,
    claimed_header_format,
    judge,
    version_triple,
)
from conformance.compat.errors import CompatInputError
from conformance.input_files import FileTooLarge, NotARegularFile, read_bounded

SCHEMA_VERSION = 1
#: A rules file is a few KiB; anything past this is refused unread.
MAX_RULES_BYTES = 1 << 20

_RANGE = {
    "type": "array",
    "items": {"type": "integer", "minimum": 0, "maximum": 65535},
    "minItems": 2,
    "maxItems": 2,
}
#: The structure of a rules file; the meaning (versions, ranges in order) is checked by ``parse_rules``.
JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schema", "backend_id", "distribution", "runtimes"],
    "additionalProperties": False,
    "properties": {
        "schema": {"const": SCHEMA_VERSION},
        "backend_id": {"type": "string", "minLength": 1, "maxLength": 255},
        "distribution": {"type": "string", "minLength": 1},
        "runtimes": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "type": "object",
                "required": [
                    "header_formats",
                    "blob_format_major",
                    "blob_format_minors",
                    "current_format_since",
                ],
                "additionalProperties": False,
                "properties": {
                    "header_formats": _RANGE,
                    "blob_format_major": {"type": "integer", "minimum": 0, "maximum": 65535},
                    "blob_format_minors": _RANGE,
                    "current_format_since": {"type": "string"},
                    "executorch": {"type": "string"},
                    "refused_on": {
                        "type": "object",
                        "additionalProperties": {"type": "string", "minLength": 1},
                    },
                },
            },
        },
    },
}


@dataclasses.dataclass(frozen=True)
class RuntimeRule:
    """What one runtime version of the backend accepts."""

    version: str
    header_formats: tuple[int, int]
    blob_format_major: int
    blob_format_minors: tuple[int, int]
    current_format_since: str
    executorch: SpecifierSet | None
    refused_on: tuple[tuple[SpecifierSet, str], ...]

    def formats(self) -> str:
        """'1.0-1.2', the blob formats this runtime reads."""
        lo, hi = self.blob_format_minors
        return f"{self.blob_format_major}.{lo}-{self.blob_format_major}.{hi}"

    def accepts_format(self, header_format: int, blob_format: tuple[int, int]) -> bool:
        """Whether a blob of this header format and blob format passes the version gate (runs)."""
        lo, hi = self.header_formats
        mlo, mhi = self.blob_format_minors
        return (
            lo <= header_format <= hi
            and blob_format[0] == self.blob_format_major
            and mlo <= blob_format[1] <= mhi
        )

    def on_executorch(self, executorch: str) -> tuple[str, str]:
        """('runs' | 'refused' | 'unknown', why) for this runtime library on ExecuTorch ``executorch``."""
        release = Version(executorch)
        for spec, reason in self.refused_on:
            if release in spec:
                return "refused", f"declared not to work on executorch {spec}: {reason}"
        if self.executorch is not None and release in self.executorch:
            return "runs", f"declared to run on executorch {self.executorch}"
        declared = str(self.executorch) if self.executorch is not None else "no range"
        return (
            "unknown",
            f"the rules declare runtime {self.version} for executorch {declared}, not {executorch}",
        )


@dataclasses.dataclass(frozen=True)
class AcceptanceRules:
    """A backend's rules, one ``RuntimeRule`` per runtime version."""

    backend_id: str
    distribution: str
    runtimes: tuple[RuntimeRule, ...]
    source: str = ""

    def runtime(self, version: str) -> RuntimeRule | None:
        """The rule of runtime ``version`` (compared as versions: '0.2' is 0.2.0), or None."""
        wanted = Version(version)
        for rule in self.runtimes:
            if Version(rule.version) == wanted:
                return rule
        return None

    def versions(self) -> list[str]:
        return [r.version for r in self.runtimes]


def _version(text: str, where: str) -> str:
    try:
        Version(text)
    except InvalidVersion:
        raise CompatInputError(f"{where}: {text!r} is not a version (PEP 440, for example 0.2.0)") from None
    return text


def _specifier(text: str, where: str) -> SpecifierSet:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise CompatInputError(
            f"{where}: {text!r} is not a version range (PEP 440, for example >=1.1,<1.6)"
        ) from None


def _ordered(pair: list[int], where: str) -> tuple[int, int]:
    lo, hi = pair
    if lo > hi:
        raise CompatInputError(f"{where}: [{lo}, {hi}] is not a range (the first number is larger)")
    return lo, hi


def parse_rules(data: Any, source: str = "acceptance rules") -> AcceptanceRules:
    """The rules in ``data`` (a rules file's JSON); CompatInputError naming ``source``, the entry and
    what is wrong otherwise."""
    try:
        jsonschema.validate(data, JSON_SCHEMA)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top level)"
        raise CompatInputError(
            f"{source}: {where}: {exc.message} (schema {SCHEMA_VERSION}, docs/compat.md)"
        ) from None
    runtimes = []
    for version, entry in data["runtimes"].items():
        where = f"{source}: runtimes/{version}"
        _version(version, where)
        runtimes.append(
            RuntimeRule(
                version=version,
                header_formats=_ordered(entry["header_formats"], f"{where}/header_formats"),
                blob_format_major=entry["blob_format_major"],
                blob_format_minors=_ordered(entry["blob_format_minors"], f"{where}/blob_format_minors"),
                current_format_since=_version(entry["current_format_since"], f"{where}/current_format_since"),
                executorch=_specifier(entry["executorch"], f"{where}/executorch")
                if "executorch" in entry
                else None,
                refused_on=tuple(
                    (_specifier(spec, f"{where}/refused_on"), reason)
                    for spec, reason in entry.get("refused_on", {}).items()
                ),
            )
        )
    if len({Version(r.version) for r in runtimes}) != len(runtimes):
        raise CompatInputError(f"{source}: runtimes: a version is listed twice")
    return AcceptanceRules(data["backend_id"], data["distribution"], tuple(runtimes), source)


def load_rules(path: str | Path) -> AcceptanceRules:
    """The rules file at ``path``; CompatInputError (one line) if it cannot be read or is not valid."""
    path = Path(path)
    try:  # a FIFO, a device or a directory is refused at once, by name
        text = read_bounded(path, MAX_RULES_BYTES)
    except FileTooLarge:
        raise CompatInputError(
            f"acceptance rules {path}: more than {MAX_RULES_BYTES} bytes, not a rules file"
        ) from None
    except FileNotFoundError:
        raise CompatInputError(f"acceptance rules {path}: no such file") from None
    except NotARegularFile as exc:
        raise CompatInputError(f"acceptance rules: {exc}") from None
    except OSError as exc:
        raise CompatInputError(f"acceptance rules {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CompatInputError(f"acceptance rules {path}: not readable JSON: {exc}") from None
    return parse_rules(data, str(path))


def rules_problem(path: Any) -> str | None:
    """What is wrong with the rules file at ``path`` (for the descriptor's validation), or None."""
    if not isinstance(path, (str, Path)):
        return f"is {path!r:.60}, a {type(path).__name__}, not the path of a rules file"
    try:
        load_rules(path)
    except CompatInputError as exc:
        return f"is not valid: {exc}"
    return None


def runtime_versions(rules: AcceptanceRules, rule: RuntimeRule, executorch: str) -> RuntimeVersions:
    """The kit's ``RuntimeVersions`` of runtime ``rule`` built for ExecuTorch ``executorch``."""
    return RuntimeVersions(
        rules.backend_id,
        rules.distribution,
        version_triple(rule.version),
        version_triple(executorch),
        rule.blob_format_major,
        rule.blob_format_minors[0],
        rule.blob_format_minors[1],
        version_triple(rule.current_format_since),
    )


def judge_blob(blob: bytes, rules: AcceptanceRules, rule: RuntimeRule, executorch: str) -> Judgement:
    """The verdict runtime ``rule`` (built for ``executorch``) gives ``blob``, with its log line."""
    lo, hi = rule.header_formats
    header_format = claimed_header_format(blob)
    if header_format is not None and not lo <= header_format <= hi:
        runtime = f"runtime {rule.version} for executorch {'.'.join(map(str, version_triple(executorch)))}"
        message = (
            f"{rules.backend_id}: incompatible blob: header format {header_format}, this runtime reads "
            f"{lo}-{hi}; {runtime} reads formats {rule.formats()}; fix: re-export with "
            f"{rules.distribution}=={rule.version}"
        )
        return Judgement(INCOMPATIBLE, message, None)
    return judge(blob, runtime_versions(rules, rule, executorch))
