"""A check's result row has one type, ``conformance.report.ResultRow`` (conformance/report/rows.py, held to
the JSON Schema by tests/certification/test_result_row.py), and so has the profile row its results give
(``ProfileRow``). No module that makes or reads results annotates one as a plain mapping again (``dict[str, Any]``, ``Mapping[str, Any]``, ``dict[str, object]``, a bare
``dict``), which mypy cannot check a key of.

How a result row is recognised, in the modules where check results flow (the run, the plugin, the report,
its renderers and certification): a parameter, a variable or an attribute named ``result``, ``results``
or ``profiles``, and what a function returns whose name says it gives them (``result``, ``result_dicts``,
``computed_profiles``, ``profile_verdicts``: any name with ``result`` or ``profile`` in it, and
``complete`` and ``carry``, listed in ``RETURNS_RESULTS``). A plain
mapping anywhere in such an annotation is one (``list[dict[str, Any]]``, ``dict[str, Any] | None``), except
as the key or value type of a dict that holds rows (``dict[str, ResultRow]`` is fine). Names other than
these (``row``, ``case``, ``report``) belong to other rows (operators', models', cases') and to the report
as a whole, which stay out of this rule.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from project_trees import ROOT, python_modules

#: Where check results are made and read: the run's collection (``run/check_results.py``) and the plugin,
#: the report and its verdict, the renderers, and certification (verify, carry-over, rerun, badge).
SCANNED = ("conformance/report", "conformance/results", "conformance/certification", "conformance/run")
SCANNED_FILES = ("conformance/plugin.py", "conformance/testing.py", "conformance/cli.py")
OWNER = ROOT / "conformance" / "report" / "rows.py"
#: Names of a parameter, variable or attribute that hold one result row or a collection of them, or the
#: profile rows.
RESULT_NAMES = frozenset({"result", "results", "profiles"})
#: What the name of a function that gives such rows has in it.
RESULT_WORDS = ("result", "profile")
#: Functions giving result rows whose name does not say "result".
RETURNS_RESULTS = frozenset({"complete", "carry"})
#: (module, function) -> why its ``result`` is not a check's result row
OTHER_RESULTS = {
    ("conformance/certification/check_wheel.py", "format_table"): (
        "the result of check-wheel (a wheel's tags and requirements), not of a check"
    ),
}
#: A plain mapping: the shape a row had before it was typed. ``\bdict\b`` not followed by ``[`` is a bare
#: ``dict``; ``dict[str, Any]`` and its spellings are matched whole.
_PLAIN = re.compile(
    r"\b(?:dict|Dict|Mapping|MutableMapping)\[str, (?:Any|object|typing\.Any)\]|\b(?:dict|Dict)\b(?!\[)"
)


def modules() -> list[Path]:
    return python_modules(*SCANNED) + [ROOT / f for f in SCANNED_FILES]


def _plain(annotation: ast.expr | None) -> bool:
    return annotation is not None and bool(_PLAIN.search(ast.unparse(annotation)))


def _target_name(target: ast.expr) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):  # self.results
        return target.attr
    return None


def plain_rows(source: str, filename: str = "<source>", module: str = "") -> list[str]:
    """``line: what`` for each result row of ``source`` (of ``module``, relative to the repository)
    annotated as a plain mapping, in line order."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if (module, node.name) in OTHER_RESULTS:
                continue
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if arg.arg in RESULT_NAMES and _plain(arg.annotation):
                    found.append(f"{arg.lineno}: parameter {arg.arg!r} of {node.name}()")
            gives_rows = any(w in node.name for w in RESULT_WORDS) or node.name in RETURNS_RESULTS
            if gives_rows and _plain(node.returns):
                found.append(f"{node.lineno}: what {node.name}() returns")
        elif isinstance(node, ast.AnnAssign):
            name = _target_name(node.target)
            if name in RESULT_NAMES and _plain(node.annotation):
                found.append(f"{node.lineno}: {ast.unparse(node.target)}")
    return sorted(found, key=lambda line: int(line.split(":")[0]))


def test_the_scan_sees_where_results_flow():
    paths = {p.relative_to(ROOT).as_posix() for p in modules()}
    assert {
        "conformance/run/check_results.py",
        "conformance/report/verdicts.py",
        "conformance/report/building.py",
        "conformance/report/records.py",
        "conformance/results/summary_text.py",
        "conformance/results/html_report.py",
        "conformance/certification/verify.py",
        "conformance/certification/carry_over.py",
        "conformance/certification/report_problems.py",
        "conformance/plugin.py",
    } <= paths
    assert OWNER in modules()
    for module, function in OTHER_RESULTS:  # an exception that names nothing any more goes
        assert f"def {function}(" in (ROOT / module).read_text(encoding="utf-8"), (module, function)
    assert "class ResultRow(" in OWNER.read_text(encoding="utf-8")


def test_the_scan_recognises_a_plain_row():
    source = """
from typing import Any
def verdict(results: list[dict[str, Any]], certify: bool) -> str: ...
def _exempt(result: dict[str, Any]) -> bool: ...
def result(check_id: str) -> dict[str, Any]: ...
def complete(ids: list[str]) -> list[dict]: ...
class Collected:
    def __init__(self) -> None:
        self.results: dict[str, dict[str, Any]] = {}
results: list[Mapping[str, Any]] = []
def profile_verdicts(results: Sequence[ResultRow]) -> list[dict[str, Any]]: ...
def _junit_profiles(self, profiles: list[dict[str, Any]]) -> None: ...
"""
    assert plain_rows(source) == [
        "3: parameter 'results' of verdict()",
        "4: parameter 'result' of _exempt()",
        "5: what result() returns",
        "6: what complete() returns",
        "9: self.results",
        "10: results",
        "11: what profile_verdicts() returns",
        "12: parameter 'profiles' of _junit_profiles()",
    ]


def test_the_scan_lets_typed_rows_and_other_rows_be():
    source = """
from typing import Any
def verdict(results: Sequence[ResultRow], certify: bool) -> tuple[str, list[str]]: ...
def result(check_id: str) -> ResultRow: ...
def result_problems(results: list[ResultRow], release) -> list[str]: ...
def case_problems(row: dict[str, Any], where: str) -> list[str]: ...
def render_page(report: dict[str, Any]) -> str: ...
class Collected:
    def __init__(self) -> None:
        self.results: dict[str, ResultRow] = {}
        self.operators: dict[tuple[str, str], dict[str, Any]] = {}
"""
    assert plain_rows(source) == []


def test_no_result_row_is_a_plain_mapping():
    plain = {
        module: rows
        for p in modules()
        if (
            rows := plain_rows(
                p.read_text(encoding="utf-8"), str(p), module := p.relative_to(ROOT).as_posix()
            )
        )
    }
    assert plain == {}, (
        "a check's result row is a conformance.report.ResultRow (conformance/report/rows.py), not a plain "
        f"mapping mypy cannot check the keys of: {plain}"
    )
