"""The result row: one check's outcome as a report holds it (``results[]`` of
conformance/schemas/report.schema.json), typed once for every module that makes or reads one; and the
profile row (``profiles[]``), the verdict the results give for one profile.

A row stays a dict in memory, typed with ``ResultRow`` (a ``TypedDict``), rather than becoming the
``Result`` dataclass of conformance/report/records.py, because the dict is what every party exchanges:
the plugin builds it from pytest's reports and hands it to ``verdict``, ``summarize`` and ``build_report``
(names of ``conformance.report`` that a certifier's script may call with rows read from a report.json),
and ``verify`` reads it from a file a forger may have written. A ``TypedDict`` changes nothing at run
time (a row is still the JSON object, and any dict is accepted where one is taken), yet lets mypy check
each key and the type of its value wherever the suite makes or reads a row. ``Result`` stays the typed
form of a row inside a whole ``Report`` (``Report.from_dict``); its ``to_dict`` gives the row back.
tests/certification/test_result_row.py holds the keys here, ``Result``'s fields and the schema's
properties equal, so none of the three can gain or lose a field alone, and
tests/layering/test_result_row_owner.py fails when a module where results flow annotates one as a plain
mapping again.

The renderers of conformance/results/ read rows as ``Any`` on purpose, not as ``ResultRow``: they draw
any report, one that did not verify or was cut short included, so a key may be missing or of another type
there (conformance/results/result_tables.py, "Cells never raise on a report of the wrong shape").

``ProfileRow`` is the same for ``profiles[]``, which ``profile_verdicts`` computes from the result rows
and ``verify`` compares with what a report claims.

A row read from a report may hold keys of a later suite version besides these: a ``TypedDict`` does not
forbid them at run time, and ``Result`` keeps them (``extra``).
"""

from __future__ import annotations

from typing import TypedDict

#: ``results[].carried_over``: the failure a previous claim carries over (conformance/certification/carry_over.py):
#: the suite version of the claim (``from``, a keyword of Python, hence the functional form), what changed
#: (``added`` or ``tightened``) and in which release (``since``), the first release in which the failure
#: counts (``failure_from``) and what the change is (``what``).
CarriedOver = TypedDict(
    "CarriedOver",
    {"from": str, "change": str, "since": str, "failure_from": str, "what": str},
)


class _RequiredResultKeys(TypedDict):
    """The keys every result row has (the schema's ``required``)."""

    id: str
    clause: str
    level: str
    title: str
    outcome: str  # one of conformance.outcomes.OUTCOMES
    reason: str


class ResultRow(_RequiredResultKeys, total=False):
    """``results[]``: one check's outcome. The keys below may be absent (a report of an earlier suite
    version, or a field written only when set); the suite's own rows always have ``applies_if``,
    ``duration_s`` and ``shared_s``."""

    applies_if: str | None
    duration_s: float | None
    #: of duration_s, the shared setup this check did first and later checks reuse (from suite 0.5.0)
    shared_s: float | None
    #: where the check's vendor-process tasks spent their time (from suite 0.6.0; conformance/vendor/step_times.py)
    init_s: float | None
    execute_s: float | None
    lowering_s: float | None
    #: written only when a previous claim carries the failure over (from suite 0.6.0)
    carried_over: CarriedOver
    #: written only when true: the check ran programs in the vendor's simulator (from suite 0.6.0)
    simulated: bool


class ProfileRow(TypedDict):
    """``profiles[]`` (from suite 0.6.0): one profile's verdict (conformance/profiles.py,
    ``conformance.report.profile_verdicts``)."""

    id: str
    name: str
    #: the ids of the report's results that belong to the profile, in result order
    checks: list[str]
    #: certified, conformant, not conformant, or not claimed (conformance.profiles.NOT_CLAIMED)
    verdict: str
    reasons: list[str]
