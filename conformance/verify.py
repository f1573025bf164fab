"""Re-checks a submitted report: schema, content hash, certify-mode rules and
whether the suite version that wrote it is still supported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import semver

from conformance.report import OUTCOMES, content_hash, verdict
from conformance.version import REPORT_SCHEMA_VERSION, SUITE_VERSION, SUPPORTED_REPORT_SUITE_VERSIONS


def _current_check_ids() -> list[str]:
    from conformance.checks import check_ids

    return check_ids()

_REQUIRED = {
    "schema": str,
    "schema_version": int,
    "suite_version": str,
    "mode": str,
    "command": str,
    "created": str,
    "environment": dict,
    "backend": dict,
    "results": list,
    "summary": dict,
    "verdict": str,
    "certified": bool,
    "content_sha256": str,
}
_RESULT_KEYS = {"id", "clause", "level", "title", "outcome", "reason"}


def supported_suite_version(version: str, spec: str = SUPPORTED_REPORT_SUITE_VERSIONS) -> bool:
    """Whether ``version`` satisfies every comparison in the comma-separated ``spec``."""
    parsed = semver.Version.parse(version)
    return all(parsed.match(part.strip()) for part in spec.split(","))


def verify_report(report: dict[str, Any]) -> list[str]:
    """Problems found in ``report``; an empty list means it verifies."""
    problems = []
    for key, kind in _REQUIRED.items():
        if not isinstance(report.get(key), kind):
            problems.append(f"field {key!r} is missing or not a {kind.__name__}")
    if problems:
        return problems
    if report["schema"] != "executorch-conformance-report" or report["schema_version"] != REPORT_SCHEMA_VERSION:
        problems.append(
            f"schema {report['schema']!r} version {report['schema_version']} is not "
            f"'executorch-conformance-report' version {REPORT_SCHEMA_VERSION}"
        )
    actual = content_hash(report)
    if actual != report["content_sha256"]:
        problems.append(
            f"content hash mismatch: the report says {report['content_sha256'][:16]}…, its content hashes to "
            f"{actual[:16]}…; the report was edited after it was written"
        )
    try:
        if not supported_suite_version(report["suite_version"]):
            problems.append(
                f"written by suite version {report['suite_version']}, which is no longer supported "
                f"(supported: {SUPPORTED_REPORT_SUITE_VERSIONS}); rerun with a current executorch-conformance"
            )
    except ValueError:
        problems.append(f"suite version {report['suite_version']!r} is not a valid version")
    for i, r in enumerate(report["results"]):
        if not isinstance(r, dict) or not _RESULT_KEYS <= set(r) or r.get("outcome") not in OUTCOMES:
            problems.append(f"result {i} is malformed (needs {sorted(_RESULT_KEYS)} and a known outcome)")
    if problems:
        return problems
    certify = report["mode"] == "certify"
    if certify:
        missing = sorted(set(_current_check_ids()) - {r["id"] for r in report["results"]})
        if report["suite_version"] == SUITE_VERSION and missing:
            problems.append(f"certify mode needs every check, but the report lacks {', '.join(missing)}")
        for r in report["results"]:
            if r["outcome"] == "expected_failure":
                problems.append(f"certify mode forbids expected failures, but {r['id']} is one ({r['reason']})")
            elif r["level"] == "MUST" and r["outcome"] != "passed" and not (
                r["outcome"] == "not_applicable" and r.get("applies_if")
                and r["applies_if"] not in report["backend"].get("capabilities", [])
            ):
                problems.append(f"certify mode: mandatory check {r['id']} is {r['outcome'].replace('_', ' ')}")
    expected_verdict, _, _ = verdict(report["results"], certify, report["backend"].get("capabilities", []))
    if report["verdict"] != expected_verdict or report["certified"] != (expected_verdict == "certified"):
        problems.append(
            f"the report claims verdict {report['verdict']!r} (certified={report['certified']}), its results "
            f"give {expected_verdict!r}"
        )
    return problems


def verify_file(path: str | Path) -> list[str]:
    try:
        report = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        return [f"cannot read {path} as JSON: {exc}"]
    if not isinstance(report, dict):
        return [f"{path} holds a JSON {type(report).__name__}, not a report object"]
    return verify_report(report)
