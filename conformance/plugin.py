"""The pytest plugin: options, the shared context, expectations, the results
table and the JSON report. Inactive unless ``--et-backend`` is given."""

from __future__ import annotations

import datetime
import os
import platform
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.descriptor import DescriptorError, load_descriptor
from conformance.expectations import ExpectationsError, load_expectations
from conformance.registry import all_checks
from conformance.report import file_sha256, verdict, write_report
from conformance.version import REPORT_SCHEMA_VERSION, SUITE_VERSION


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("executorch-conformance")
    group.addoption("--et-backend", metavar="NAME|MODULE:ATTR", help="the backend descriptor to check")
    group.addoption("--et-expectations", metavar="TOML", help="expected failures / not-applicable checks, with reasons")
    group.addoption("--et-certify", action="store_true", help="no expected failures; every mandatory check must pass")
    group.addoption("--et-report", metavar="JSON", help="where to write the JSON report")
    group.addoption("--et-checks", metavar="IDS", help="comma-separated check IDs or areas (AOT, RT, ...) to run")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("et_backend"):
        config.pluginmanager.register(ConformanceRun(config), "executorch-conformance-run")


@pytest.fixture(scope="session")
def et_context(request: pytest.FixtureRequest):
    """The Context of this run (one per pytest process, shared by all checks)."""
    run = request.config.pluginmanager.get_plugin("executorch-conformance-run")
    if run is None:
        pytest.skip("no backend given: pass --et-backend NAME or MODULE:ATTR")
    return run.context()


def _status(report: pytest.TestReport) -> tuple[str, str] | None:
    """(outcome, reason) of a check's report, or None for phases that add nothing."""
    reason = _reason(report)
    if hasattr(report, "wasxfail"):
        if report.skipped:
            return "expected_failure", report.wasxfail
        return "unexpected_pass", f"expected to fail ({report.wasxfail}) but passed"
    if report.skipped:  # declared (setup) or raised by the check (call)
        return "not_applicable", reason.removeprefix("Skipped: ").removeprefix("not applicable: ")
    if report.when == "call":
        if report.passed:
            return "passed", ""
        if "[XPASS(strict)]" in reason:
            return "unexpected_pass", reason
        return "failed", reason
    if report.failed:
        return "error", reason
    return None


def _reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple):  # skips: (path, line, message)
        return str(longrepr[2])
    crash = getattr(longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(longrepr)
    return text.removeprefix("Failed: ")


class ConformanceRun:
    """State of one run, on the controller and on each xdist worker."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.checks = {c.id: c for c in all_checks()}
        try:
            self.descriptor = load_descriptor(config.getoption("et_backend"))
            self.expectations = load_expectations(config.getoption("et_expectations"), list(self.checks))
        except (DescriptorError, ExpectationsError) as exc:
            raise pytest.UsageError(str(exc)) from None
        self.certify = bool(config.getoption("et_certify"))
        if self.certify and self.expectations.expected_failures:
            raise pytest.UsageError(
                "--certify forbids expected failures, but the expectations file declares: "
                + ", ".join(f"{k} ({v})" for k, v in self.expectations.expected_failures.items())
            )
        selected = config.getoption("et_checks")
        if selected and self.certify:
            raise pytest.UsageError("--et-certify runs every check; it cannot be combined with --et-checks")
        self.selected = {s.strip() for s in selected.split(",")} if selected else None
        self.results: dict[str, dict[str, Any]] = {}
        self.started = time.monotonic()
        self._context = None

    def context(self):
        if self._context is None:
            from conformance.context import Context

            self._context = Context(self.descriptor)
        return self._context

    def _wanted(self, check_id: str) -> bool:
        return self.selected is None or check_id in self.selected or check_id.split("-")[0] in self.selected

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        keep, drop = [], []
        for item in items:
            check = getattr(getattr(item, "callspec", None), "params", {}).get("check")
            if check is None:
                keep.append(item)
                continue
            if not self._wanted(check.id):
                drop.append(item)
                continue
            item.user_properties.extend(
                [("check_id", check.id), ("clause", check.clause), ("level", check.level), ("title", check.title),
                 ("applies_if", check.applies_if or "")]
            )
            reason = self.expectations.expected_failure(check.id)
            if reason:
                item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
            reason = self.expectations.declared_not_applicable(check.id)
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"not applicable: {reason}"))
            keep.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        if "check_id" not in props:
            return
        status = _status(report)
        if status is None:
            return
        outcome, reason = status
        previous = self.results.get(props["check_id"])
        if previous and previous["outcome"] != "passed" and outcome == "passed":
            return
        self.results[props["check_id"]] = {
            "id": props["check_id"],
            "clause": props["clause"],
            "level": props["level"],
            "title": props["title"],
            "applies_if": props.get("applies_if") or None,
            "outcome": outcome,
            "reason": reason,
            "duration_s": round(report.duration, 3),
        }

    def ordered_results(self) -> list[dict[str, Any]]:
        return [self.results[i] for i in self.checks if i in self.results]

    def build_report(self) -> dict[str, Any]:
        import importlib.metadata as md

        results = self.ordered_results()
        capabilities = self.descriptor.capabilities()
        verdict_text, reasons, warnings = verdict(results, self.certify, capabilities)
        libraries = []
        try:
            for path in self.descriptor.runtime_libraries():
                libraries.append({"path": str(path), "sha256": file_sha256(path)})
        except OSError as exc:
            libraries.append({"path": str(exc.filename), "sha256": None, "error": str(exc)})

        def version(dist: str) -> str | None:
            try:
                return md.version(dist)
            except md.PackageNotFoundError:
                return None

        summary = {o: sum(r["outcome"] == o for r in results) for o in
                   ("passed", "failed", "error", "not_applicable", "expected_failure", "unexpected_pass")}
        summary["total"] = len(results)
        return {
            "schema": "executorch-conformance-report",
            "schema_version": REPORT_SCHEMA_VERSION,
            "suite_version": SUITE_VERSION,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": os.environ.get("EXECUTORCH_CONFORMANCE_COMMAND") or shlex.join(sys.argv),
            "mode": "certify" if self.certify else "standard",
            "environment": {
                "executorch": version("executorch"),
                "torch": version("torch"),
                "python": platform.python_version(),
                "platform": platform.platform(),
                "machine": platform.machine(),
            },
            "backend": {
                "id": self.descriptor.backend_id,
                "distribution": self.descriptor.distribution,
                "version": self.descriptor.version,
                "installed_version": version(self.descriptor.distribution),
                "capabilities": capabilities,
                "runtime_libraries": libraries,
            },
            "results": results,
            "summary": summary,
            "verdict": verdict_text,
            "verdict_reasons": reasons,
            "warnings": warnings,
            "certified": verdict_text == "certified",
            "duration_s": round(time.monotonic() - self.started, 1),
        }

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if hasattr(self.config, "workerinput"):
            return  # xdist worker: the controller writes the report
        self.report = self.build_report()
        path = self.config.getoption("et_report")
        if path:
            self.report = write_report(self.report, path)
        if self.certify and not self.report["certified"] and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter, exitstatus: int, config: pytest.Config) -> None:
        if hasattr(config, "workerinput") or not hasattr(self, "report"):
            return
        tr = terminalreporter
        tr.section(f"executorch conformance: {self.descriptor.backend_id} {self.descriptor.version}")
        for line in render_table(self.report["results"]):
            tr.write_line(line)
        s = self.report["summary"]
        tr.write_line("")
        tr.write_line(
            f"verdict: {self.report['verdict'].upper()} ({self.report['mode']} mode): "
            f"{s['passed']} passed, {s['failed'] + s['error']} failed, {s['not_applicable']} not applicable, "
            f"{s['expected_failure']} expected failures, {s['unexpected_pass']} unexpected passes"
        )
        for reason in self.report["verdict_reasons"]:
            tr.write_line(f"  - {reason}")
        for warning in self.report["warnings"]:
            tr.write_line(f"  - warning: {warning}")
        path = config.getoption("et_report")
        if path:
            tr.write_line(f"report: {Path(path).resolve()}")


def render_table(results: list[dict[str, Any]], width: int = 110) -> list[str]:
    """The results as aligned text rows: check, clause, level, result, reason."""
    labels = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "not_applicable": "N/A",
              "expected_failure": "XFAIL", "unexpected_pass": "XPASS"}
    rows = [("check", "clause", "level", "result", "reason")]
    rows += [(r["id"], r["clause"], r["level"], labels[r["outcome"]], r["reason"].replace("\n", " ")) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for row in rows:
        head = "  ".join(cell.ljust(w) for cell, w in zip(row, widths))
        room = max(20, width - len(head) - 2)
        reason = row[4] if len(row[4]) <= room else row[4][: room - 1] + "…"
        lines.append(f"{head}  {reason}".rstrip())
    return lines
