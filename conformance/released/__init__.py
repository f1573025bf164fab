"""What each released suite version checks, and for how long its reports count.

One JSON file per released suite version (``0.1.0.json``, ``0.2.0.json``, ...),
committed with the release. Each holds:

``suite_version``          the version
``report_schema_version``  the ``schema_version`` its reports carry
``released``               the release date (``YYYY-MM-DD``)
``valid_until``            the last day on which ``verify`` accepts its reports
``checks``                 every check of that version: id, clause, level, title, applies_if
``tightenings``            (from 0.6.0) the checks this version made stricter: check, since, what
                           (``conformance.requirement_changes``; a check the version adds is new by
                           its absence from the earlier lists)
``operator_cases``         (from 0.3.0) per corpus operator and dtype, how many cases the OPS checks
                           run: ``[without the dynamic-shape cases, with them]`` (those run only for an
                           operator declared dynamic), and (from 0.6.0) a third count, the cases that run
                           quantized by an integer-only backend's quantizer (``spec.quantizable``;
                           0 for the hand-made quantized patterns); ``verify`` compares the report's
                           ``operators`` rows with it

``verify`` compares a report with the file of the suite version that wrote
it: a report whose checks differ from that list, or whose suite version has
no file here, is rejected. The file of the current ``SUITE_VERSION`` is
written from the registry by the maintainer script
``python -m conformance.released --released DATE --valid-until DATE``
(tests/certification/test_released.py fails when it drifts from the
registry).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from functools import cache
from pathlib import Path
from typing import Any

from conformance.requirement_changes import TIGHTENED, Tightening

HERE = Path(__file__).parent
CHECK_FIELDS = ("id", "clause", "level", "title", "applies_if")


@dataclasses.dataclass(frozen=True)
class Release:
    suite_version: str
    report_schema_version: int
    released: datetime.date
    valid_until: datetime.date
    #: check id -> {"id", "clause", "level", "title", "applies_if"}, in check order
    checks: dict[str, dict[str, Any]]
    #: operator -> dtype -> (cases without dynamic shapes, all cases); None when the file has none
    operator_cases: dict[str, dict[str, tuple[int, ...]]] | None = None
    #: the checks this version made stricter (none recorded before 0.6.0)
    tightenings: tuple[Tightening, ...] = ()

    @property
    def check_ids(self) -> list[str]:
        return list(self.checks)

    @property
    def capabilities(self) -> set[str]:
        return {c["applies_if"] for c in self.checks.values() if c["applies_if"]}


def _parse(data: dict[str, Any]) -> Release:
    return Release(
        suite_version=data["suite_version"],
        report_schema_version=data["report_schema_version"],
        released=datetime.date.fromisoformat(data["released"]),
        valid_until=datetime.date.fromisoformat(data["valid_until"]),
        checks={c["id"]: {k: c[k] for k in CHECK_FIELDS} for c in data["checks"]},
        operator_cases=(
            {op: {d: tuple(n) for d, n in by.items()} for op, by in data["operator_cases"].items()}
            if "operator_cases" in data
            else None
        ),
        tightenings=tuple(Tightening(**t) for t in data.get("tightenings", ())),
    )


@cache
def releases(directory: str = str(HERE)) -> dict[str, Release]:
    """Every released suite version, by version string."""
    out = {}
    for path in sorted(Path(directory).glob("*.json")):
        release = _parse(json.loads(path.read_text(encoding="utf-8")))
        if release.suite_version != path.stem:
            raise ValueError(f"{path} holds suite version {release.suite_version}")
        out[release.suite_version] = release
    return out


def registry_checks() -> list[dict[str, Any]]:
    """The checks of this source tree, as a released file lists them."""
    from conformance.checks import all_checks

    return [{k: getattr(c, k) for k in CHECK_FIELDS} for c in all_checks()]


def corpus_case_counts() -> dict[str, dict[str, list[int]]]:
    """operator -> dtype -> [cases without dynamic shapes, all cases, cases quantized by an integer-only
    backend's quantizer] of this source tree's corpus."""
    from conformance.operators import corpus
    from conformance.operators.spec import quantizable

    out: dict[str, dict[str, list[int]]] = {}
    for op, entry in corpus.operators().items():
        for dtype in entry.dtypes:
            made = corpus.cases(op, dtype)
            out.setdefault(op, {})[dtype] = [
                sum("dynamic" not in c.traits for c in made),
                len(made),
                sum(quantizable(c) for c in made),
            ]
    return out


def release_data(released: str, valid_until: str) -> dict[str, Any]:
    from conformance.version import REPORT_SCHEMA_VERSION, SUITE_VERSION

    if datetime.date.fromisoformat(valid_until) <= datetime.date.fromisoformat(released):
        raise ValueError(f"valid-until {valid_until} is not after the release date {released}")
    return {
        "suite_version": SUITE_VERSION,
        "report_schema_version": REPORT_SCHEMA_VERSION,
        "released": released,
        "valid_until": valid_until,
        "checks": registry_checks(),
        "tightenings": [t.to_dict() for t in TIGHTENED if t.since == SUITE_VERSION],
        "operator_cases": corpus_case_counts(),
    }
