"""ExecuTorch's measured program compatibility: what each runtime release was seen to load and run in
the release grid (matrix/results/<release>/grid.json), distilled into ``measured.json`` beside this
file (by ``conformance.compat.distill``) so that ``compat`` needs no checkout.

Per runtime release: the program file identifiers it loaded, the operators (left to its kernels) of
programs it ran, and for each backend whose runtime ships inside ExecuTorch (a grid cell run with no
backend library loaded: XNNPACK) the blob formats it ran. Only cells that ran and matched count as
"runs"; a refused or crashed cell records its detail.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from packaging.version import Version

from conformance.compat.errors import CompatInputError

DATA = Path(__file__).with_name("measured.json")
SCHEMA_VERSION = 1


@dataclasses.dataclass(frozen=True)
class MeasuredRuntime:
    """What one ExecuTorch runtime release was measured doing."""

    release: str
    grid: str
    program_identifiers: frozenset[str]
    operators: frozenset[str]
    exported_with: tuple[str, ...]
    #: backend id -> blob format -> {"status": "runs" | another grid status, "detail": ..., "cells": n}
    builtin_backends: dict[str, dict[str, dict]]


@dataclasses.dataclass(frozen=True)
class Measured:
    """Every measured runtime release, by release."""

    runtimes: dict[str, MeasuredRuntime]
    source: str

    def runtime(self, release: str) -> MeasuredRuntime | None:
        wanted = Version(release)
        for name, rt in self.runtimes.items():
            if Version(name) == wanted:
                return rt
        return None

    def builtin_backend_ids(self) -> set[str]:
        return {b for rt in self.runtimes.values() for b in rt.builtin_backends}

    def releases(self) -> list[str]:
        return sorted(self.runtimes, key=Version)


def load_measured(path: Path = DATA) -> Measured:
    """The measured data (``measured.json``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CompatInputError(
            f"measured data {path}: cannot be read ({exc}); reinstall executorch-conformance"
        ) from None
    if data.get("schema") != SCHEMA_VERSION:
        raise CompatInputError(
            f"measured data {path}: schema {data.get('schema')!r}, this suite reads {SCHEMA_VERSION}"
        )
    runtimes = {
        release: MeasuredRuntime(
            release,
            entry["grid"],
            frozenset(entry["program_identifiers"]),
            frozenset(entry["operators"]),
            tuple(entry["exported_with"]),
            entry["builtin_backends"],
        )
        for release, entry in data["runtimes"].items()
    }
    return Measured(runtimes, data["source"])
