"""The tables of a run's results, defined once: which columns, in which order, and the text of each cell.

A ``Table`` is a tuple of ``Column``s and a rule that gives each row its state (``ok``, ``bad``,
``warn`` or ``na``). ``CHECKS`` (the report's ``results``), ``PROFILES`` (``profiles``, or what the
results give for a report without them: ``profile_rows``), ``OPERATORS`` (``operators``) and
``MODELS`` (``models``) are the four tables; the terminal (``table_text``), the HTML page
(``html_report``) and Markdown (``table_text.markdown``) only draw them, so the same report shows
the same columns in the same order with the same cells everywhere.

Cells never raise on a report of the wrong shape: a missing or mistyped field is an empty cell
(the HTML page renders partial reports too).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from conformance.models.results import MATCHED, NOT_DELEGATED, NOT_RUN
from conformance.outcomes import BAD, EXPECTED_FAILURE, LABELS, NOT_APPLICABLE, OUTCOMES, PASSED
from conformance.profiles import NOT_CLAIMED
from conformance.profiles import PROFILES as DEFINED_PROFILES
from conformance.report import profile_verdicts

OK, BAD_STATE, WARN, NA = "ok", "bad", "warn", "na"

#: Outcome of a check -> state of its row.
OUTCOME_STATE = {
    **dict.fromkeys(BAD, BAD_STATE),
    PASSED: OK,
    NOT_APPLICABLE: NA,
    EXPECTED_FAILURE: WARN,
}
assert set(OUTCOME_STATE) == set(OUTCOMES)


def get(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` when ``obj`` is a dict, else ``default``."""
    return obj.get(key, default) if isinstance(obj, dict) else default


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _text(value: Any) -> str:
    return "" if value is None else str(value).replace("\n", " ")


def _of_tolerance(error: Any, used: Any) -> str:
    """'5e-07 (2.00%)': a worst error and the share of its tolerance it used ('-' when none)."""
    if not _number(error):
        return "-"
    used = used if _number(used) else 0.0
    return f"{error:.2g} ({used:.2%})" if used <= 1 else f"{error:.2g} ({used:.3g}x)"


@dataclasses.dataclass(frozen=True)
class Column:
    """One column: its header, the text of its cell for a row, whether it holds a number (right-aligned)
    and whether it is the free text at the end of the row (wrapped on a terminal)."""

    header: str
    cell: Callable[[Any], str]
    numeric: bool = False
    free: bool = False
    #: the state of this cell (coloured on the page), when it differs from having none
    state: Callable[[Any], str | None] | None = None


@dataclasses.dataclass(frozen=True)
class Table:
    """A table: ``id`` (the HTML element's), its columns and the state of a row."""

    id: str
    columns: tuple[Column, ...]
    row_state: Callable[[Any], str]
    #: a short text shown on hover of the first cell (the page only), or None
    hint: Callable[[Any], str | None] = lambda row: None

    def __post_init__(self) -> None:
        free = [i for i, c in enumerate(self.columns) if c.free]
        assert free in ([], [len(self.columns) - 1]), f"{self.id}: only the last column may be free text"

    @property
    def headers(self) -> list[str]:
        return [c.header for c in self.columns]

    def cells(self, row: Any) -> list[str]:
        return [c.cell(row) for c in self.columns]


# --------------------------------------------------------------------------- checks


def shared_s(r: Any) -> float:
    """The shared setup a check did first (0.0 when the report does not say)."""
    shared = get(r, "shared_s")
    return float(shared) if _number(shared) and shared > 0 else 0.0


def own_s(r: Any) -> float | None:
    """A check's own time: its duration without the shared setup it did for later checks too."""
    d = get(r, "duration_s")
    return max(0.0, d - shared_s(r)) if _number(d) else None


def _own(r: Any) -> str:
    own = own_s(r)
    return "" if own is None else f"{own:.1f}"


def _shared(r: Any) -> str:
    return f"{shared_s(r):.1f}" if shared_s(r) >= 0.05 else ""


def _step(key: str) -> Callable[[Any], str]:
    """The cell of a check's ``init_s`` or ``execute_s`` (conformance/vendor/step_times.py): blank under 0.05 s
    or when the report does not say."""

    def cell(r: Any) -> str:
        value = get(r, key)
        return f"{value:.1f}" if _number(value) and value >= 0.05 else ""

    return cell


def shared_setup_line(results: Sequence[Any]) -> str | None:
    """'shared setup: 120.5 s ...': the work done once and reused (the 'shared s' column), None when none."""
    total = sum(shared_s(r) for r in results)
    if total < 0.05:
        return None
    return (
        f"shared setup: {total:.1f} s of lowerings, samples and runtime loads, each done once by the first "
        "check that needed it and reused by later ones ('shared s'; 's' is each check's own time)"
    )


CHECKS = Table(
    id="results",
    columns=(
        Column("check", lambda r: _text(get(r, "id"))),
        Column("clause", lambda r: _text(get(r, "clause"))),
        Column("level", lambda r: _text(get(r, "level"))),
        Column(
            "result",
            lambda r: (
                LABELS.get(get(r, "outcome"), _text(get(r, "outcome")) or "?")
                + (" (simulated)" if get(r, "simulated") is True else "")
            ),
            state=lambda r: OUTCOME_STATE.get(get(r, "outcome"), NA),
        ),
        Column("s", _own, numeric=True),
        Column("shared s", _shared, numeric=True),
        Column("init s", _step("init_s"), numeric=True),
        Column("exec s", _step("execute_s"), numeric=True),
        Column("reason", lambda r: _text(get(r, "reason")), free=True),
    ),
    row_state=lambda r: OUTCOME_STATE.get(get(r, "outcome"), NA),
    hint=lambda r: get(r, "title") if isinstance(get(r, "title"), str) else None,
)


# --------------------------------------------------------------------------- operators


def operator_state(row: Any) -> str:
    """``bad`` when a case failed; ``ok`` when every delegated case ran and passed (a case declared
    unsupported and not delegated is not owed); ``na`` when some delegated cases did not run (OPS-2 was not
    selected, or stopped early)."""
    failing = get(row, "first_failing")
    delegated, ran, passed = get(row, "delegated"), get(row, "ran"), get(row, "passed")
    if failing is not None or not all(isinstance(x, int) for x in (delegated, ran, passed)):
        return BAD_STATE
    if passed < ran:
        return BAD_STATE
    return OK if ran == delegated else NA


def _first_failing(row: Any) -> str:
    failing = get(row, "first_failing")
    if isinstance(failing, dict):
        return f"{_text(get(failing, 'case'))}: {_text(get(failing, 'reason'))}"
    return _text(failing)


def _passed(row: Any) -> str:
    passed, ran = get(row, "passed"), get(row, "ran")
    return f"{passed}/{ran}" if ran is not None else _text(passed)


OPERATORS = Table(
    id="operator-table",
    columns=(
        Column("operator", lambda o: _text(get(o, "op"))),
        Column("dtype", lambda o: _text(get(o, "dtype"))),
        Column("cases", lambda o: _text(get(o, "cases")), numeric=True),
        Column("delegated", lambda o: _text(get(o, "delegated")), numeric=True),
        Column("passed", _passed, numeric=True, state=operator_state),
        Column("worst (of tol.)", lambda o: _of_tolerance(get(o, "worst_error"), get(o, "tolerance_used"))),
        Column("first failing case", _first_failing, free=True),
    ),
    row_state=operator_state,
)


def with_cases(rows: Sequence[Any]) -> list[Any]:
    """The operator rows the table shows: those with corpus cases (a pair with none has nothing to show;
    ``without_cases`` names them)."""
    return [o for o in rows if get(o, "cases") != 0]


def without_cases(rows: Sequence[Any]) -> list[str]:
    """'op (dtype)' of each declared pair the corpus has no case for."""
    return [f"{_text(get(o, 'op'))} ({_text(get(o, 'dtype'))})" for o in rows if get(o, "cases") == 0]


def operator_summary(rows: Sequence[Any]) -> str:
    """One sentence over the operator rows: how many pairs have cases, how many pass every delegated case,
    fail or were not fully run, and which have no corpus case."""
    shown = with_cases(rows)
    states = [operator_state(o) for o in shown]
    parts = [f"{states.count(OK)} pass every delegated case"]
    if states.count(BAD_STATE):
        parts.append(f"{states.count(BAD_STATE)} fail")
    if states.count(NA):
        parts.append(f"{states.count(NA)} were not fully run (OPS-2 did not run all their delegated cases)")
    text = (
        f"{len(rows)} declared operator and dtype pairs; of the {len(shown)} with corpus cases, "
        + ", ".join(parts)
    )
    none = without_cases(rows)
    if none:
        text += f". No corpus case for {len(none)}, not shown: {', '.join(none)} (OPS-1's reason says why)"
    return text + "."


# --------------------------------------------------------------------------- models


def model_state(m: Any) -> str:
    """Matched is OK; not delegated, or not run (no runtime, no target, no quantizer, another row's program: the
    reason says which), is not applicable; anything else is bad."""
    result = get(m, "result")
    return OK if result == MATCHED else NA if result in (NOT_DELEGATED, NOT_RUN) else BAD_STATE


def _delegated_nodes(m: Any) -> str:
    nodes, delegated, share = get(m, "nodes"), get(m, "delegated_nodes"), get(m, "delegated_fraction")
    if nodes is None:
        return "-"
    return f"{_text(delegated)}/{_text(nodes)}" + (f" ({share:.0%})" if _number(share) else "")


def _on_cpu_or_reason(m: Any) -> str:
    reason = get(m, "reason")
    if get(m, "result") in (MATCHED, NOT_DELEGATED) or not reason:
        cpu = get(m, "cpu_ops")
        by_count = sorted(cpu.items(), key=lambda kv: (-kv[1], kv[0])) if isinstance(cpu, dict) else []
        ops = ", ".join(f"{str(op).removeprefix('aten::')} x{n}" for op, n in by_count) or "-"
        matched, steps = get(m, "matched_tokens"), get(m, "steps")
        if _number(matched) and _number(steps):  # a generating model (the LLM tier)
            tie = ", then a near tie" if matched < steps and reason else ""  # llm_runner.near_tie
            return f"{matched}/{steps} tokens as eager{tie}; on CPU: {ops}"
        return ops
    return _text(reason)


def _tokens_per_s(m: Any) -> str:
    """A generating model's tokens per second (the LLM tier), '-' for the others."""
    rate = get(m, "tokens_per_s")
    return f"{rate:.0f}" if _number(rate) else "-"


MODELS = Table(
    id="model-table",
    columns=(
        Column("model", lambda m: _text(get(m, "model"))),
        Column("architecture", lambda m: _text(get(m, "family"))),
        Column("delegated nodes", _delegated_nodes, numeric=True),
        Column(
            "delegates",
            lambda m: "-" if get(m, "delegates") is None else _text(get(m, "delegates")),
            numeric=True,
        ),
        Column(
            "max error (of tol.)", lambda m: _of_tolerance(get(m, "max_abs_error"), get(m, "tolerance_used"))
        ),
        Column("tokens/s", _tokens_per_s, numeric=True),
        Column("result", lambda m: _text(get(m, "result")), state=model_state),
        Column("on CPU / reason", _on_cpu_or_reason, free=True),
    ),
    row_state=model_state,
)

# --------------------------------------------------------------------------- profiles

#: A profile's verdict -> state of its row.
PROFILE_STATE = {"certified": OK, "conformant": OK, "not conformant": BAD_STATE, NOT_CLAIMED: NA}


def profile_state(p: Any) -> str:
    return PROFILE_STATE.get(get(p, "verdict"), NA)


def _profile_checks(p: Any) -> str:
    """How many of the report's checks the profile holds (their ids are in report.json)."""
    checks = get(p, "checks")
    return str(len(checks)) if isinstance(checks, list) else ""


def _profile_reasons(p: Any) -> str:
    reasons = get(p, "reasons")
    return "; ".join(map(_text, reasons)) if isinstance(reasons, list) else ""


PROFILES = Table(
    id="profiles",
    columns=(
        Column("profile", lambda p: _text(get(p, "name"))),
        Column("verdict", lambda p: _text(get(p, "verdict")), state=profile_state),
        Column("checks", _profile_checks, numeric=True),
        Column("why not", _profile_reasons, free=True),
    ),
    row_state=profile_state,
    hint=lambda p: _profile_reason(get(p, "id")),
)


def _profile_reason(profile_id: Any) -> str | None:
    """What passing the profile means (conformance/profiles.py), for the page's hover."""
    return next((p.reason for p in DEFINED_PROFILES if p.id == profile_id), None)


def profile_rows(report: Any) -> tuple[list[Any], bool]:
    """(the report's ``profiles`` entries, False) when it has them; else (the entries its results give,
    True): a report before suite 0.6.0 has none. ([], True) for results of the wrong shape."""
    written = get(report, "profiles")
    if isinstance(written, list):
        return written, False
    results = get(report, "results")
    capabilities = get(get(report, "backend"), "capabilities") or []
    try:
        return (
            profile_verdicts(
                list(results),
                get(report, "mode") == "certify",
                list(capabilities),
                get(report, "interrupted") is True,
            ),
            True,
        )
    except (TypeError, KeyError, AttributeError):
        return [], True


TABLES = (CHECKS, PROFILES, OPERATORS, MODELS)
