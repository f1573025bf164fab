"""A valid report of the current suite version, built from the registry."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

from conformance.checks import all_checks
from conformance.report import SCHEMA, profile_verdicts, seal, summarize, verdict
from conformance.version import REPORT_SCHEMA_VERSION, SUITE_VERSION


def finish(report: dict[str, Any]) -> dict[str, Any]:
    """Recomputes summary, verdict, reasons, warnings and profiles from the results, and seals: a forger's
    last step."""
    report = {k: v for k, v in report.items() if k != "content_sha256"}
    certify = report["mode"] == "certify"
    capabilities = report["backend"]["capabilities"]
    text, reasons, warnings = verdict(report["results"], certify, capabilities)
    report.update(
        summary=summarize(report["results"]),
        verdict=text,
        verdict_reasons=reasons,
        warnings=warnings,
        certified=text == "certified",
        profiles=profile_verdicts(report["results"], certify, capabilities),
    )
    return seal(report)


#: A real report: `executorch-conformance run --backend ReferenceBackend --certify` (bash scripts/conformance.sh)
#: of reference backend 0.3.0 on executorch 1.5.1 with this suite version (forgeries start from it;
#: test_forgeries.py). Rewrite it (cp reports/report.json) when a suite version is released.
REAL = Path(__file__).parent / "data" / f"reference-certify-{SUITE_VERSION}.json"
#: The same run with suites 0.3.0 to 0.5.0: reports of earlier suite versions that verify inside their windows.
EARLIER = [
    Path(__file__).parent / "data" / f"reference-certify-{v}.json" for v in ("0.3.0", "0.4.0", "0.5.0")
]


def real_report() -> dict[str, Any]:
    return json.loads(REAL.read_text(encoding="utf-8"))


def result_rows(checks: str | None = None, **outcomes: str) -> list[dict[str, Any]]:
    """A result per check of the suite (those of the areas or ids ``checks`` names), passed unless
    ``outcomes`` names it (``RT_5="failed"``): then its reason says so."""
    rows = []
    for c in all_checks():
        if checks is not None and c.area not in checks.split(",") and c.id not in checks.split(","):
            continue
        outcome = outcomes.get(c.id.replace("-", "_"), "passed")
        rows.append(
            {
                "id": c.id,
                "clause": c.clause,
                "level": c.level,
                "title": c.title,
                "applies_if": c.applies_if,
                "outcome": outcome,
                "reason": "" if outcome == "passed" else f"{c.id} went wrong",
                "duration_s": 0.01,
            }
        )
    return rows


def make_report(
    mode: str = "certify",
    checks: str | None = None,
    libraries: list[dict] | None = None,
    created: str | None = None,
) -> dict[str, Any]:
    """A sealed report with every (selected) check passed."""
    results = result_rows(checks)
    created = created or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return finish(
        {
            "schema": SCHEMA,
            "schema_version": REPORT_SCHEMA_VERSION,
            "suite_version": SUITE_VERSION,
            "created": created,
            "command": "executorch-conformance run --backend ReferenceBackend"
            + (" --certify" if mode == "certify" else ""),
            "mode": mode,
            "environment": {
                "executorch": "1.5.1",
                "torch": "2.13.0+cpu",
                "python": "3.11.7",
                "platform": "Linux",
                "machine": "x86_64",
            },
            "backend": {
                "id": "ReferenceBackend",
                "distribution": "executorch-reference-backend",
                "version": "0.2.0",
                "installed_version": "0.2.0",
                "capabilities": [
                    "named_data",
                    "quantized",
                    "dynamic_shapes",
                    "composition",
                    "acceptance",
                    "mutable_state",
                ],
                "runtime_libraries": libraries if libraries is not None else [],
            },
            "results": results,
            "selected": [r["id"] for r in results],
            "options": {
                "backend": "ReferenceBackend",
                "expectations": None,
                "certify": mode == "certify",
                "checks": checks,
                "timeout": None,
                "workers": 1,
            },
            "duration_s": 1.0,
            # the OPS checks' rows (the real run's), when an OPS check is selected
            **(
                {"operators": real_report()["operators"]}
                if any(r["id"].startswith("OPS-") for r in results)
                else {}
            ),
        }
    )
