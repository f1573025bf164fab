"""What a finished run prints on a terminal: the result tables (``result_tables`` drawn by
``table_text``), the clauses no check tests, each profile's verdict, and the verdict with its reasons
and the profiles it certifies. The CLI's console and
the pytest plugin's terminal summary both print these lines."""

from __future__ import annotations

import textwrap
from typing import Any

from conformance.outcomes import (
    CRASHED,
    ERROR,
    EXPECTED_FAILURE,
    FAILED,
    NOT_APPLICABLE,
    NOT_RUN,
    PASSED,
    TIMED_OUT,
    UNEXPECTED_PASS,
)
from conformance.profiles import certified_profiles
from conformance.registry import not_checked_lines
from conformance.results.result_tables import (
    CHECKS,
    MODELS,
    OPERATORS,
    PROFILES,
    operator_summary,
    profile_rows,
    shared_setup_line,
    with_cases,
)
from conformance.results.table_text import render


def verdict_lines(report: dict[str, Any]) -> list[str]:
    """The verdict line with the counts, then its reasons and warnings."""
    s = report["summary"]
    bad = s[FAILED] + s[ERROR] + s[CRASHED] + s[TIMED_OUT] + s[NOT_RUN]
    lines = [
        (
            f"verdict: {report['verdict'].upper()} ({report['mode']} mode"
            f"{', interrupted' if report['interrupted'] else ''}): "
            f"{s[PASSED]} passed, {bad} failed ({s['crashed']} crashed, {s['timed_out']} timed out, "
            f"{s[NOT_RUN]} not run), {s[NOT_APPLICABLE]} not applicable, "
            f"{s[EXPECTED_FAILURE]} expected failures, {s[UNEXPECTED_PASS]} unexpected passes"
        )
    ]
    lines += [f"  - {reason}" for reason in report["verdict_reasons"]]
    lines += [f"  - warning: {warning}" for warning in report["warnings"]]
    lines += [f"  - deprecated: {text}" for text in report.get("deprecations", ())]
    lines += [certifies_line(report)]
    deviations = deviations_line(report)
    simulated = simulated_line(report)
    return lines + ([deviations] if deviations else []) + ([simulated] if simulated else [])


def simulated_line(report: dict[str, Any]) -> str | None:
    """What a simulated run's results mean, next to its verdict (the report's ``simulator``), or None for a
    run with a real runtime (docs/contract.md, "Simulated runtimes")."""
    section = report.get("simulator")
    if not isinstance(section, dict):
        return None
    marked = [
        r.get("id", "?") for r in report.get("results", ()) if isinstance(r, dict) and r.get("simulated")
    ]
    return (
        f"simulated: the delegates of {section.get('backend_id', '?')} ran in the vendor's simulator "
        f"{section.get('simulator', '?')} inside ExecuTorch's runtime, not in a runtime library of the "
        f"backend's ({len(marked)} results marked simulated); the runtime library's registration, ABI and "
        'memory are not judged (docs/contract.md, "Simulated runtimes")'
    )


def deviations_line(report: dict[str, Any]) -> str | None:
    """'judged by declared deviations: aten::maximum: NaN ignored; ...' (the backend's
    ``declared_deviations``, next to the verdict), or None when it declares none."""
    backend = report.get("backend")
    found = backend.get("declared_deviations") if isinstance(backend, dict) else None
    if not found or not isinstance(found, list):
        return None
    return "judged by declared deviations: " + "; ".join(str(x) for x in found)


def certifies_line(report: dict[str, Any]) -> str:
    """'certifies: Core + Named data' (the profiles the report certifies, docs/contract.md "Profiles"),
    'certifies: no profile (Core is not certified)' in certify mode, 'certifies: nothing (standard mode)'."""
    if report.get("mode") != "certify":
        return "certifies: nothing (standard mode)"
    rows, _ = profile_rows(report)
    certified = certified_profiles(rows)
    return (
        f"certifies: {' + '.join(certified)}"
        if certified
        else "certifies: no profile (Core is not certified)"
    )


def case_counts_line(rows: list[dict[str, Any]]) -> str | None:
    """'cases: 120 passed, 3 excluded (...)': the operator cases by outcome, None without case rows."""
    from conformance.operators.case_outcomes import CASE_OUTCOMES

    counts: dict[str, int] = {}
    for row in rows:
        for case in row.get("case_results") or ():
            counts[case["outcome"]] = counts.get(case["outcome"], 0) + 1
    if not counts:
        return None
    told = ", ".join(f"{counts[o]} {o.replace('_', ' ')}" for o in CASE_OUTCOMES if o in counts)
    return f"cases: {told} (each case: report.json case_results, junit-operators.xml)"


def summary_lines(report: dict[str, Any], width: int = 120) -> list[str]:
    """The tables, the clauses not checked and the verdict of ``report`` (a report.json object)."""
    lines = render(CHECKS, report["results"], width)
    shared = shared_setup_line(report["results"])
    lines += textwrap.wrap(shared, width, break_on_hyphens=False) if shared else []
    lines += not_checked_lines()
    if report.get("operators"):
        rows = report["operators"]
        lines += ["", *textwrap.wrap(operator_summary(rows), width, break_on_hyphens=False)]
        lines += render(OPERATORS, with_cases(rows), width)
        counted = case_counts_line(rows)
        lines += [counted] if counted else []
    if report.get("models"):
        lines += ["", "models (report-only, not counted for the verdict):"]
        lines += render(MODELS, report["models"], width)
    profiles, computed = profile_rows(report)
    if profiles:
        lines += ["", f"profiles{' (computed from the results)' if computed else ''}:"]
        lines += render(PROFILES, profiles, width)
    return lines + [""] + verdict_lines(report)


def markdown_summary(report: dict[str, Any]) -> str:
    """The run as Markdown (a CI job summary: ``page --markdown``): the verdict, the same tables as the
    terminal's and the page's, the shared setup and the clauses not checked. Never raises on a report of
    the wrong shape (the cells of ``result_tables`` do not)."""
    from conformance.results.result_tables import get
    from conformance.results.table_text import markdown

    backend = get(report, "backend", {})
    results = [r for r in get(report, "results", []) or [] if isinstance(r, dict)]
    lines = [
        f"## executorch conformance: {get(backend, 'id', '?')} {get(backend, 'version', '')}".rstrip(),
        "",
        f"**verdict: {str(get(report, 'verdict', 'no verdict')).upper()}** ({get(report, 'mode', '?')} mode)",
    ]
    lines += [f"- {x}" for x in get(report, "verdict_reasons", []) or []]
    lines += [f"- warning: {x}" for x in get(report, "warnings", []) or []]
    profiles, _ = profile_rows(report)
    if profiles:
        lines += ["", *markdown(PROFILES, profiles)]
    lines += ["", *markdown(CHECKS, results), ""]
    shared = shared_setup_line(results)
    lines += [shared, ""] if shared else []
    lines += [f"{line}  " for line in not_checked_lines()]
    operators = [o for o in get(report, "operators", []) or [] if isinstance(o, dict)]
    if operators:
        lines += ["", "### Operators", "", operator_summary(operators), ""]
        lines += markdown(OPERATORS, with_cases(operators))
    models = [m for m in get(report, "models", []) or [] if isinstance(m, dict)]
    if models:
        lines += ["", "### Models (report-only, not counted for the verdict)", ""]
        lines += markdown(MODELS, models)
    return "\n".join(lines) + "\n"
