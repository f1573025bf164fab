"""The table of the executorch wheels' own backend libraries judged against every release
(matrix/results/in_wheel_abi.json, made by ``python -m matrix.in_wheel_abi``), as Markdown and
HTML sections of the release matrix."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from conformance.markdown_table import markdown_table

FILE = "in_wheel_abi.json"
#: verdict -> (cell text, HTML class)
_CELLS = {
    "binary compatible": ("compatible", "pass"),
    "is this release's runtime": ("is its runtime", "pass"),
    "carries its own registry": ("own registry", "fail"),
    "carries its own runtime": ("own runtime", "fail"),
    "must rebuild": ("rebuild", "rebuild"),
}
_REASON_CHARS = 70


def load(results_dir: Path) -> dict | None:
    path = results_dir / FILE
    return json.loads(path.read_text()) if path.exists() else None


def _short(reason: str) -> str:
    """A reason without what the column already says: ``needs X, which executorch R does not
    ship (...)`` -> ``no X``; ``missing symbol S (not exported by ...)`` -> ``missing S``."""
    m = re.match(r"needs (.+?)(?: \(NEEDED by [^)]*\))?, which executorch \S+ does not ship", reason)
    if m:
        return f"no {m.group(1)}"
    if reason.startswith("missing symbol "):
        return "missing " + reason.removeprefix("missing symbol ").split("(", 1)[0] + "(…)"
    return reason.split(" (", 1)[0]


def cell(verdict: dict) -> str:
    """``compatible`` / ``is its runtime`` / ``own registry`` / ``rebuild: <first reason>``."""
    text, _ = _CELLS.get(verdict["verdict"], (verdict["verdict"], "na"))
    if verdict["verdict"] != "must rebuild":
        return text
    first = _short(verdict["reasons"][0]) if verdict["reasons"] else ""
    short = first if len(first) <= _REASON_CHARS else first[: _REASON_CHARS - 1] + "…"
    return f"{text}: {short}" + (f" (+{len(verdict['reasons']) - 1})" if len(verdict["reasons"]) > 1 else "")


def _rows(data: dict) -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    """(backend, wheel release, library and how, [(cell, class) per target release])."""
    out = []
    for row in sorted(data["rows"], key=lambda r: (r["backend"], r["release"])):
        where = f"`{row['library']}` ({row['how']})" if row["library"] else row["how"]
        if "verdicts" not in row:
            out.append((row["backend"], row["release"], where, [("—", "na")] * len(data["against"])))
            continue
        cells = []
        for target in data["against"]:
            v = row["verdicts"][target]
            cells.append((cell(v), _CELLS.get(v["verdict"], ("", "na"))[1]))
        out.append((row["backend"], row["release"], where, cells))
    return out


_INTRO = (
    "`abi check` of the XNNPACK, OpenVINO and QNN libraries that ship inside the executorch wheels "
    "(binaries this project did not build), each inside its own wheel and built against that wheel's "
    "release, judged against every release's libraries (imports bound the way the loader binds them). "
    '"is its runtime": the library is the registry that release\'s executorch.runtime uses; '
    '"own registry": loaded next to that release\'s runtime it is a second registry, whose backends '
    "executorch.runtime does not see. Reasons in full: the JSON file."
)


def markdown(results_dir: Path) -> list[str]:
    data = load(results_dir)
    if data is None:
        return []
    lines = [
        "## The executorch wheels' own backend libraries (rows) x releases (columns)",
        "",
        _INTRO,
        "",
        *markdown_table(
            ["backend", "wheel", "library", *data["against"]],
            [
                [backend, release, where, *(c for c, _ in cells)]
                for backend, release, where, cells in _rows(data)
            ],
        ),
    ]
    lines += [
        "",
        f"From `{FILE}`, made {data['generated']} by `{data['generated_by']}` from the wheels "
        + ", ".join(f"{w['wheel']}" for w in data["wheels"].values())
        + ".",
        "",
    ]
    return lines


def html_section(results_dir: Path) -> str:
    data = load(results_dir)
    if data is None:
        return ""
    e = html.escape
    body = []
    for backend, release, where, cells in _rows(data):
        body.append(
            f"<tr><td>{e(backend)}</td><td>{e(release)}</td><td>{e(where.replace('`', ''))}</td>"
            + "".join(f'<td class="{cls}">{e(text)}</td>' for text, cls in cells)
            + "</tr>"
        )
    return (
        "<h2>The executorch wheels' own backend libraries x releases</h2>"
        f"<p>{e(_INTRO.replace('`', ''))}</p>"
        '<table id="in-wheel-abi"><thead><tr><th>backend</th><th>wheel</th><th>library</th>'
        + "".join(f"<th>{e(r)}</th>" for r in data["against"])
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
        + f'<p class="note">From {e(FILE)}, made {e(data["generated"])} by <code>{e(data["generated_by"])}</code>.</p>'
    )
