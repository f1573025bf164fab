"""The JSON report of a run (schema: docs/report-schema.md) and its content hash.

The hash is a SHA-256 over the canonical JSON of the report without the hash
field. It detects edits, it does not prove who ran the suite.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from conformance.outcomes import OUTCOMES  # noqa: F401  (re-exported)


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
    results: list[dict[str, Any]], certify: bool, capabilities: list[str] | tuple[str, ...] = ()
) -> tuple[str, list[str], list[str]]:
    """('certified' | 'conformant' | 'not conformant', reasons, warnings).

    MUST checks decide the verdict: any failure, error or unexpected pass makes
    the backend not conformant, and in certify mode so does any MUST check
    that did not pass, except a conditional one (``applies_if``) whose
    capability the backend does not declare. SHOULD checks that do not pass
    are warnings.
    """
    reasons, warnings = [], []
    for r in results:
        bad = r["outcome"] in ("failed", "error", "unexpected_pass")
        if r["level"] != "MUST":
            if bad:
                warnings.append(f"{r['id']} ({r['level']}) {r['outcome']}: {r['reason']}")
        elif bad:
            reasons.append(f"{r['id']} {r['outcome']}: {r['reason']}")
        elif certify and r["outcome"] == "not_applicable" and _exempt(r, capabilities):
            continue
        elif certify and r["outcome"] != "passed":
            reasons.append(f"{r['id']} is mandatory but {r['outcome'].replace('_', ' ')}: {r['reason']}")
    if reasons:
        return "not conformant", reasons, warnings
    return ("certified" if certify else "conformant"), [], warnings


def _exempt(result: dict[str, Any], capabilities) -> bool:
    condition = result.get("applies_if")
    return bool(condition) and condition not in capabilities


def write_report(report: dict[str, Any], path: str | Path) -> dict[str, Any]:
    sealed = seal(report)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(sealed, indent=2, sort_keys=True) + "\n")
    return sealed
