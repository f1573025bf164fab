"""A badge for a report: an SVG file and a shields.io endpoint JSON, naming the profiles it certifies
(``ExecuTorch conformance 0.6: Core + Named data on executorch 1.5.1``)."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from conformance.profiles import certified_profiles
from conformance.report import Report

COLORS = {"certified": "#2e7d32", "conformant": "#43a047", "not conformant": "#c62828"}
#: The longest executorch version a badge shows (the report's string is the report writer's).
MAX_VERSION = 32
#: A conformant verdict that needed waivers (expected failures, declared not-applicable MUST checks).
WAIVED_COLOR = "#9e9d24"


def badge_fields(report: dict[str, Any]) -> tuple[str, str, str]:
    """(label, message, color) for ``report``. The label names the suite's minor release, ``ExecuTorch
    conformance 0.6``; the message names the profiles the report certifies (``Core + Named data``), or,
    when it certifies none, the verdict and its counts in the words of ``verify``'s verdict line
    (``conformant 22/25 passed, 3 waived, 6 exempt``), then the executorch release judged on
    (``on executorch 1.5.1``).

    The profiles are recomputed from the results (conformance.report.profile_verdicts), so a report
    written before profiles existed gets its badge too. Waived: expected failures and MUST checks
    declared not applicable (not the conditional checks a backend is exempt from). Draw a badge only
    from a report that verifies (``executorch-conformance badge`` does).
    """
    from conformance.certification.result_counts import counts_phrase, tally

    counts, waived, exempt = tally(report["results"], report["backend"].get("capabilities", []))
    certified = certified_profiles(Report.from_dict(report).computed_profiles())
    if certified:
        message = " + ".join(certified)
    else:
        message = f"{report['verdict']} {counts_phrase(counts, waived, exempt)}"
    version = (report["environment"].get("executorch") or "unknown").split("+")[0]
    message += f" on executorch {version[:MAX_VERSION]}"
    if isinstance(report.get("simulator"), dict):
        message += " (simulated)"
    label = f"ExecuTorch conformance {_minor(report['suite_version'])}"
    color = COLORS["certified"] if certified else COLORS.get(report["verdict"], "#9e9e9e")
    if waived and report["verdict"] == "conformant":
        color = WAIVED_COLOR
    return label, message, color


def _minor(suite_version: str) -> str:
    """``0.6`` for suite version ``0.6.0`` (at most MAX_VERSION characters of what the report says)."""
    return ".".join(suite_version.split(".")[:2])[:MAX_VERSION]


def _width(text: str) -> int:
    # Verdana 11px averages about 6.5 px a character; enough for a flat badge.
    return int(len(text) * 6.5) + 12


def render_svg(label: str, message: str, color: str) -> str:
    lw, mw = _width(label), _width(message)
    label, message = escape(label), escape(message)
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="{lw + mw}" height="20" role="img" aria-label="{label}: {message}">
<title>{label}: {message}</title>
<rect width="{lw}" height="20" fill="#555"/>
<rect x="{lw}" width="{mw}" height="20" fill="{color}"/>
<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">
<text x="{lw / 2}" y="14">{label}</text>
<text x="{lw + mw / 2}" y="14">{message}</text>
</g>
</svg>
"""


def write_badge(report: dict[str, Any], out_dir: str | Path) -> tuple[Path, Path]:
    """Writes badge.svg and badge.json (shields.io endpoint schema 1) into ``out_dir``."""
    label, message, color = badge_fields(report)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    svg, endpoint = out / "badge.svg", out / "badge.json"
    svg.write_text(render_svg(label, message, color))
    endpoint.write_text(
        json.dumps(
            {"schemaVersion": 1, "label": label, "message": message, "color": color.lstrip("#")}, indent=2
        )
        + "\n"
    )
    return svg, endpoint
