"""The problems ``verify`` finds in a report's ``operators`` section: each row against the OPS checks'
results, its cases (conformance/operators/case_outcomes.py) and the corpus counts of the release that wrote
it (``operator_cases`` in conformance/released/)."""

from __future__ import annotations

from typing import Any

from conformance.certification.report_problems import some_ids
from conformance.outcomes import NOT_APPLICABLE, PASSED

_OPS = ("OPS-1", "OPS-2")


def operator_problems(report: dict[str, Any], release) -> list[str]:
    """The operators section must be the rows the OPS checks' outcomes rest on."""
    problems: list[str] = []
    outcome = {r["id"]: r["outcome"] for r in report["results"] if r["id"] in _OPS}
    rows = report.get("operators")
    if rows is None:
        problems += [
            f"{i} passed, but the report has no operators section (an OPS check records one row per "
            "declared operator and dtype)"
            for i in _OPS
            if outcome.get(i) == PASSED
        ]
        return problems
    if all(outcome.get(i, NOT_APPLICABLE) == NOT_APPLICABLE for i in _OPS):
        return ["the report has an operators section, but no OPS check ran"]
    if not rows:
        return [
            "the operators section is empty; an OPS check that ran records every declared operator and dtype"
        ]
    both = outcome.get("OPS-1") == PASSED and outcome.get("OPS-2") == PASSED
    seen: set[tuple[str, str]] = set()
    for j, row in enumerate(rows):
        pair = (row["op"], row["dtype"])
        where = f"operators[{j}] ({row['op']} {row['dtype']})"
        if pair in seen:
            problems.append(f"{where} appears twice in operators")
        seen.add(pair)
        cases = row["cases"]
        for key, bound, name in (
            ("excluded", cases, "cases"),
            ("delegated", cases, "cases"),
            ("ran", row["delegated"], "delegated"),
            ("passed", row["ran"], "ran"),
        ):
            if row[key] > bound:
                problems.append(f"{where}: {key} is {row[key]}, more than its {bound} {name}")
        if row["ran"] == 0 and (row["worst_error"] is not None or row["tolerance_used"] is not None):
            problems.append(f"{where}: no case ran, yet it records a worst error")
        if outcome.get("OPS-1") == PASSED and row["delegated"] < cases - row["excluded"]:
            problems.append(
                f"OPS-1 passed, but {where} has {row['delegated']} delegated of {cases - row['excluded']} "
                "cases that must be"
            )
        if outcome.get("OPS-2") == PASSED and row["passed"] != row["ran"]:
            problems.append(
                f"OPS-2 passed, but {where} passed {row['passed']} of the {row['ran']} cases that ran"
            )
        if both and row["first_failing"] is not None:
            problems.append(
                f"OPS-1 and OPS-2 passed, but {where} names a failing case ({row['first_failing']['case']})"
            )
        if row.get("case_results") is not None:
            problems += case_problems(row, where, outcome)
    if outcome.get("OPS-2") == PASSED and not any(row["ran"] for row in rows):
        problems.append("OPS-2 passed, but no operator case ran (operators: ran is 0 for every row)")
    if release.operator_cases is not None:
        problems += corpus_problems(rows, release)
    return problems


#: The most problems verify lists for the case rows of one operator row.
CASE_PROBLEMS = 20


def case_problems(row: dict[str, Any], where: str, outcome: dict[str, str]) -> list[str]:
    """The row's ``case_results`` must be one consistent row per case, and the row's counts, worst error
    and first failing case must be what they add up to."""
    from conformance.operators import case_outcomes as co

    cases = row["case_results"]
    problems = []
    for k, case in enumerate(cases):
        problems += co.row_problems(
            case, row["op"], row["dtype"], f"{where} case_results[{k}] ({case['case'][:40]})"
        )
    if len(problems) > CASE_PROBLEMS:  # a forged report may hold millions of rows
        problems = problems[:CASE_PROBLEMS] + [
            f"{where}: and {len(problems) - CASE_PROBLEMS} more case problems"
        ]
    names = [case["case"] for case in cases]
    if len(set(names)) != len(names):
        problems.append(f"{where}: case_results names a case twice")
    counts = {
        "cases": len(cases),
        "excluded": sum(case["excluded"] for case in cases),
        "delegated": sum(case["delegated"] for case in cases),
        "ran": sum(case["ran"] for case in cases),
        "passed": sum(case["outcome"] == co.PASSED for case in cases),
    }
    for key, count in counts.items():
        if row[key] != count:
            problems.append(f"{where}: {key} is {row[key]}, but its case_results add up to {count}")
    for key, largest in co.extremes(cases).items():
        if row[key] != largest:
            problems.append(f"{where}: {key} {row[key]} is not the largest of its case_results")
    failing = next((case for case in cases if case["outcome"] in co.FAILING), None)
    expected = None if failing is None else {"case": failing["case"], "reason": failing["reason"]}
    if row["first_failing"] != expected:
        problems.append(
            f"{where}: first_failing is {row['first_failing']!r}, but its first failing case_results row "
            f"gives {expected!r}"
        )
    if outcome.get("OPS-1") == PASSED:
        bad = [c["case"] for c in cases if not c["excluded"] and not c["delegated"]]
        if bad:
            problems.append(f"OPS-1 passed, but {where} has cases not delegated: {some_ids(bad)}")
    if outcome.get("OPS-2") == PASSED:
        bad = [c["case"] for c in cases if c["delegated"] and c["outcome"] != co.PASSED]
        if bad:
            problems.append(
                f"OPS-2 passed, but {where} has delegated cases that did not pass: {some_ids(bad)}"
            )
    return problems


def corpus_problems(rows: list[dict[str, Any]], release) -> list[str]:
    """Each row's case count must be what the released corpus has for the pair (with or without its cases
    of dynamic shapes, which run only for an operator declared dynamic; from 0.6.0 also the cases an
    integer-only backend's quantizer quantizes; 0 for a pair it lacks)."""
    problems = []
    for j, row in enumerate(rows):
        op = row["op"].removesuffix(".default")
        allowed = set(release.operator_cases.get(op, {}).get(row["dtype"], (0, 0)))
        if row["cases"] not in allowed:
            told = " or ".join(str(n) for n in sorted(allowed))
            problems.append(
                f"operators[{j}] ({row['op']} {row['dtype']}) has {row['cases']} cases, but the corpus of suite "
                f"{release.suite_version} has {told} for it"
            )
    return problems
