"""A badge for a report: an SVG file and a shields.io endpoint JSON."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

COLORS = {"certified": "#2e7d32", "conformant": "#43a047", "not conformant": "#c62828"}
#: The longest executorch version a badge shows (the report's string is the report writer's).
MAX_VERSION = 32
#: A conformant verdict that needed waivers (expected failures, declared not-applicable MUST checks).
WAIVED_COLOR = "#9e9d24"


def badge_fields(report: dict[str, Any]) -> tuple[str, str, str]:
    """(label, message, color) for ``report``: ``certified 35/36``, ``conformant 22/25, 3 waived``.

    Waived: expected failures and MUST checks declared not applicable (not the
    conditional checks a backend is exempt from). Draw a badge only from a
    report that verifies (``executorch-conformance badge`` does).
    """
    from conformance.certification.verify import tally

    counts, waived, _ = tally(report["results"], report["backend"].get("capabilities", []))
    message = f"{report['verdict']} {counts['passed']}/{counts['total']}"
    if waived:
        message += f", {waived} waived"
    version = (report["environment"].get("executorch") or "unknown").split("+")[0]
    label = f"executorch {version[:MAX_VERSION]}"
    color = COLORS.get(report["verdict"], "#9e9e9e")
    if waived and report["verdict"] == "conformant":
        color = WAIVED_COLOR
    return label, message, color


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
