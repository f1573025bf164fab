"""The JSON report of a run (schema: docs/report-schema.md) and its content hash.

The hash is a SHA-256 over the canonical JSON of the report without the hash
field. It detects edits, it does not prove who ran the suite.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from conformance.outcomes import BAD, MUST, NOT_APPLICABLE, OUTCOMES, PASSED

#: The ``schema`` field of every report.
SCHEMA = "executorch-conformance-report"


def canonical_bytes(report: dict[str, Any]) -> bytes:
    body = {k: v for k, v in report.items() if k != "content_sha256"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def content_hash(report: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_bytes(report)).hexdigest()


def seal(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with its content_sha256 filled in."""
    sealed = dict(report)
    sealed["content_sha256"] = content_hash(sealed)
    return sealed


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verdict(
    results: list[dict[str, Any]],
    certify: bool,
    capabilities: list[str] | tuple[str, ...] = (),
    interrupted: bool = False,
) -> tuple[str, list[str], list[str]]:
    """('certified' | 'conformant' | 'not conformant', reasons, warnings).

    MUST checks decide the verdict: any failure, error, crash, timeout, check
    that did not run or unexpected pass makes the backend not conformant, and in
    certify mode so does any MUST check that did not pass, except a conditional
    one (``applies_if``) whose capability the backend does not declare. An
    interrupted run or one with no results is never conformant. SHOULD checks
    that do not pass are warnings. Checks failed by one cause (the same reason)
    are named together in one reason.
    """
    causes: dict[tuple[str, str], list[str]] = {}
    warnings = []
    for r in results:
        bad = r["outcome"] in BAD
        if r["level"] != MUST:
            if bad:
                warnings.append(f"{r['id']} ({r['level']}) {r['outcome']}: {r['reason']}")
            continue
        if bad:
            cause = (r["outcome"].replace("_", " "), _cause(r["reason"]))
        elif certify and r["outcome"] == NOT_APPLICABLE and _exempt(r, capabilities):
            continue
        elif certify and r["outcome"] != PASSED:
            cause = (f"mandatory but {r['outcome'].replace('_', ' ')}", r["reason"])
        else:
            continue
        causes.setdefault(cause, []).append(r["id"])
    reasons = []
    if interrupted:
        reasons.append("the run was interrupted: a partial run is never conformant")
    if not results:
        reasons.append("the report holds no results")
    by_id = {r["id"]: r["reason"] for r in results}
    for (outcome, shared), ids in causes.items():
        if len(ids) == 1:
            reasons.append(f"{ids[0]} {outcome}: {by_id[ids[0]]}")
        else:
            reasons.append(f"{len(ids)} checks {outcome} for one cause ({', '.join(ids)}): {shared}")
    if reasons:
        return "not conformant", reasons, warnings
    return ("certified" if certify else "conformant"), [], warnings


#: The note the Context adds when a remembered failure is met again by another check.
_FIRST_SEEN = re.compile(r" \(found while running [A-Z]+-\d+\)$")
#: The vendor's code named as what raised: "make_partitioners() raised ...", "make() of sample model 'x' raised ...".
_VENDOR_RAISED = re.compile(r"(\S+\(\)(?: of sample model '[^']*')? raised \w+.*)$")


def _cause(reason: str) -> str:
    """What a failure comes down to, so that checks failed by the same vendor error are grouped."""
    reason = _FIRST_SEEN.sub("", reason)
    found = _VENDOR_RAISED.search(reason)
    return found.group(1) if found else reason


def _exempt(result: dict[str, Any], capabilities) -> bool:
    condition = result.get("applies_if")
    return bool(condition) and condition not in capabilities


def summarize(results: list[dict[str, Any]]) -> dict[str, int]:
    """Count of each outcome, and the total."""
    summary = {o: sum(r["outcome"] == o for r in results) for o in OUTCOMES}
    summary["total"] = len(results)
    return summary


def _version_of(dist: str) -> str | None:
    import importlib.metadata as md

    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def runtime_libraries(descriptor: Any) -> list[dict[str, Any]]:
    """Path and sha256 of each runtime library the descriptor names; an error is recorded, not raised."""
    from conformance.descriptor import raised

    try:
        paths = [str(p) for p in descriptor.runtime_libraries()]
    except Exception as exc:  # noqa: BLE001  what the vendor's code raised (recorded in the vendor process)
        return [{"path": None, "sha256": None, "error": f"runtime_libraries() raised {raised(exc)}"}]
    libraries: list[dict[str, Any]] = []
    for path in paths:
        try:
            libraries.append({"path": path, "sha256": file_sha256(path)})
        except OSError as exc:
            libraries.append({"path": path, "sha256": None, "error": f"{type(exc).__name__}: {exc.strerror}"})
    return libraries


def build_report(
    *,
    descriptor: Any,
    results: list[dict[str, Any]],
    certify: bool,
    interrupted: bool,
    selected: list[str],
    options: dict[str, Any],
    command: str | None,
    duration_s: float,
    operators: list[dict[str, Any]] | None = None,
    target: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report of a run (docs/report-schema.md), without its content hash. ``operators``: the rows of
    the OPS checks (one per operator and dtype), reported as the ``operators`` section when given.
    ``target``: where the runtime checks ran (--target: its URL, uname, runner version, the sha256 of the
    runner's libraries there), reported as the ``target`` section when given."""
    import datetime
    import platform
    import shlex
    import sys

    from conformance.version import REPORT_SCHEMA_VERSION, SUITE_VERSION

    capabilities = descriptor.capabilities()
    verdict_text, reasons, warnings = verdict(results, certify, capabilities, interrupted)
    report = {
        "schema": SCHEMA,
        "schema_version": REPORT_SCHEMA_VERSION,
        "suite_version": SUITE_VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command or shlex.join(sys.argv),
        "mode": "certify" if certify else "standard",
        "options": options,
        "environment": {
            "executorch": _version_of("executorch"),
            "torch": _version_of("torch"),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "machine": platform.machine(),
        },
        "backend": {
            "id": descriptor.backend_id,
            "distribution": descriptor.distribution,
            "version": descriptor.version,
            "installed_version": _version_of(descriptor.distribution),
            "capabilities": capabilities,
            "runtime_libraries": runtime_libraries(descriptor),
        },
        "selected": list(selected),
        "results": results,
        "summary": summarize(results),
        "interrupted": interrupted,
        "verdict": verdict_text,
        "verdict_reasons": reasons,
        "warnings": warnings,
        "certified": verdict_text == "certified",
        "duration_s": round(duration_s, 1),
    }
    if operators is not None:
        report["operators"] = operators
    if target is not None:
        report["target"] = target
    return report


def write_report(report: dict[str, Any], path: str | Path) -> dict[str, Any]:
    sealed = seal(report)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(sealed, indent=2, sort_keys=True) + "\n")
    return sealed
