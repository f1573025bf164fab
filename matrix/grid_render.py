"""The grid (exported-with x run-on), the blob grid (blob writer x reference
runtime) and the torch axis, read from the committed results and rendered as
markdown lines or HTML.

``load(results)`` reads ``<results>/<release>/grid.json`` and
``<results>/torch/*.json``; a file that is not JSON or lacks a field raises
GridError with one line naming the file, what is wrong and the command that
rewrites it. Releases with no grid.json are columns marked "not run".
"""

from __future__ import annotations

import dataclasses
import html
import json
from pathlib import Path

from packaging.version import Version

from conformance.markdown_table import markdown_table
from matrix.releases import RELEASES

PROGRAM_FILES = ("reference.pte", "xnnpack.pte")
_CELL_KEYS = ("status", "detail", "command")


class GridError(ValueError):
    """A grid result cannot be read; the message is one line."""


@dataclasses.dataclass
class Grids:
    by_release: dict[str, dict]  # release -> grid.json
    torch: dict[str, dict]  # torch version -> torch axis result


def tox_env(version: str) -> str:
    return "et" + version.replace(".", "")


def _read(path: Path, fix: str, keys: tuple[str, ...]) -> dict:
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise GridError(f"{path}: cannot be read ({exc.strerror}); rerun `{fix}`") from None
    except json.JSONDecodeError as exc:
        raise GridError(f"{path}: not JSON (line {exc.lineno}: {exc.msg}); rerun `{fix}`") from None
    missing = [k for k in keys if not isinstance(data, dict) or k not in data]
    if missing:
        raise GridError(f"{path}: no {', '.join(missing)} (written by an older matrix.grid?); rerun `{fix}`")
    return data


def load(results: Path) -> Grids:
    by_release = {}
    for rel in RELEASES:
        path = results / rel.executorch / "grid.json"
        if not path.exists():
            continue
        fix = f"tox -e {tox_env(rel.executorch)}"
        grid = _read(path, fix, ("runtime", "created", "programs"))
        for i, cell in enumerate(grid["programs"] + grid.get("blobs", [])):
            missing = [k for k in _CELL_KEYS if k not in cell]
            if missing:
                raise GridError(f"{path}: cell {i} has no {', '.join(missing)}; rerun `{fix}`")
        by_release[rel.executorch] = grid
    torch = {}
    for path in (results / "torch").glob("*.json"):
        data = _read(path, "tox -m torch", ("torch", "executorch", "files", "created", "command"))
        torch[data["torch"]] = data
    return Grids(by_release, dict(sorted(torch.items(), key=lambda kv: Version(kv[0]))))


def short(cell: dict) -> str:
    """A cell's status in a few words (the full message is in the notes)."""
    status = cell["status"]
    if status == "runs and matches":
        return "runs, matches"
    if status == "refused":
        code = cell["detail"].rsplit("error: ", 1)[-1] if "error: " in cell["detail"] else ""
        return f"refused {code}".strip()
    return status if status != "crashed" else cell["detail"]


def message(cell: dict) -> str:
    """What the user sees, and the backend's own log line when there is one."""
    said = [line for line in cell.get("log", []) if "ReferenceBackend:" in line]
    text = cell["detail"]
    return f"{text}; log: {said[0]}" if said else text


def program_rows(grids: Grids) -> tuple[list[str], list[tuple[str, str, list[dict | None]]]]:
    """(runtime columns, [(exported_with, file, [cell or None per column])])."""
    columns = [r.executorch for r in RELEASES]
    index: dict[tuple[str, str, str], dict] = {}
    for runtime, grid in grids.by_release.items():
        for cell in grid["programs"]:
            index[(cell["exported_with"], cell["program"], runtime)] = cell
    rows = []
    for exported in columns:
        for name in PROGRAM_FILES:
            cells = [index.get((exported, name, runtime)) for runtime in columns]
            if any(cells):
                rows.append((exported, name, cells))
    return columns, rows


def blob_rows(grids: Grids) -> tuple[str | None, list[str], list[tuple[str, list[dict | None]]]]:
    """The newest release's blob grid: (release, runtime versions, [(blob, cells)])."""
    for release in reversed(list(grids.by_release)):
        blobs = grids.by_release[release].get("blobs") or []
        if blobs:
            runtimes = list(dict.fromkeys(c["runtime"] for c in blobs))
            names = list(dict.fromkeys(c["blob"] for c in blobs))
            cell = {(c["blob"], c["runtime"]): c for c in blobs}
            return release, runtimes, [(n, [cell.get((n, r)) for r in runtimes]) for n in names]
    return None, [], []


def _blob_text(cell: dict) -> str:
    verdict = cell.get("observed", cell["status"])
    if cell.get("agrees"):
        return f"{verdict} (as the table says)"
    return f"{verdict}; the table says {cell['expected']['verdict']}"


def _torch_rows(grids: Grids) -> list[tuple[str, dict, str]]:
    """[(torch, result, note on the bytes compared with the oldest torch listed)]."""
    rows = []
    base: dict = next(iter(grids.torch.values()), {})
    for version, result in grids.torch.items():
        same = [
            name
            for name in PROGRAM_FILES
            if base
            and result["files"].get(name, {}).get("sha256")
            and result["files"][name].get("sha256") == base["files"].get(name, {}).get("sha256")
        ]
        note = (
            "same bytes as with torch " + base["torch"] + (f" ({', '.join(same)})" if same else ": none")
            if base is not result
            else "(baseline)"
        )
        rows.append((version, result, note))
    return rows


def _torch_file(entry: dict) -> str:
    if not entry.get("exported"):
        return f"export fails: {entry.get('error', '?')[:160]}"
    run = entry.get("run", {})
    return f"exports; {short(run) if 'status' in run else 'not run'}"


def markdown(grids: Grids) -> list[str]:
    """The grid sections of matrix/README.md."""
    columns, rows = program_rows(grids)
    notes: list[str] = []

    def noted(cell: dict | None) -> str:
        if cell is None:
            return "not run"
        text = short(cell)
        if cell["status"] != "runs and matches":
            said = message(cell)
            if said not in notes:
                notes.append(said)
            text += f" [{notes.index(said) + 1}]"
        return text

    lines = [
        "## The grid: exported with (rows) x run on (columns)",
        "",
        (
            "Each committed golden program (tests/golden/<release>/, the reference backend and XNNPACK) "
            "loaded and run on each release's runtime, its output compared with the recorded eager output "
            "(matrix/grid.py; reference programs with the reference runtime library built for that "
            "runtime's release)."
        ),
        "",
        *markdown_table(
            ["exported with", "program", *(f"on {c}" for c in columns)],
            [[exported, name, *(noted(c) for c in cells)] for exported, name, cells in rows],
        ),
    ]
    lines += ["", *[f"[{i}] {n}" for i, n in enumerate(notes, 1)], ""]
    lines += [
        (
            "How each column was produced (one cell alone: `python -m matrix.grid_case PROGRAM --expected "
            "MANIFEST [--library LIB]` in that env, the exact line is the cell's `command` in grid.json):"
        ),
        "",
    ]
    for c in columns:
        grid = grids.by_release.get(c)
        if grid is None:
            lines.append(f"- on {c}: not run (no results/{c}/grid.json; run `tox -e {tox_env(c)}`)")
            continue
        rt = grid["runtime"]
        lines.append(
            f"- on {c}: `tox -e {tox_env(c)}` ({grid.get('command', 'python -m matrix.grid')}), "
            f"{grid['created']}, torch {rt.get('torch')}; reference library: "
            f"{rt.get('reference_library_how')}"
        )
    release, runtimes, brows = blob_rows(grids)
    lines += ["", "## Blob grid: reference backend blobs (rows) x reference runtime versions (columns)", ""]
    if release is None:
        lines += ["not run: no grid.json holds blob cells (run `tox -e et151`)", ""]
    else:
        lines += [
            (
                f"Every released reference backend version's blobs (tests/golden/blobs/blobs.json) on the "
                f"runtime library of every released version, on executorch {release}; each verdict checked "
                "against the rules of docs/blob-header.md (matrix/blob_verdicts.py)."
            ),
            "",
        ]
        bnotes: list[str] = []
        table: list[list[str]] = []
        for name, cells in brows:
            texts = []
            for cell in cells:
                if cell is None:
                    texts.append("not run")
                    continue
                text = _blob_text(cell)
                said = [line for line in cell.get("log", []) if "ReferenceBackend:" in line]
                if said:
                    if said[0] not in bnotes:
                        bnotes.append(said[0])
                    text += f" [b{bnotes.index(said[0]) + 1}]"
                texts.append(text)
            table.append([name, *texts])
        lines += markdown_table(["blob", *(f"runtime {r}" for r in runtimes)], table)
        grid = grids.by_release[release]
        lines += [
            "",
            *[f"[b{i}] {n}" for i, n in enumerate(bnotes, 1)],
            "",
            f"Produced by `tox -e {tox_env(release)}` (python -m matrix.grid), {grid['created']}; runtimes: "
            + "; ".join(f"{v}: {info['how']}" for v, info in grid.get("blob_runtimes", {}).items()),
            "",
        ]
    lines += ["## The torch axis: executorch 1.5.1 with each torch", ""]
    if not grids.torch:
        lines += ["not run: no results/torch/*.json (run `tox -m torch`)", ""]
    else:
        lines += markdown_table(
            ["torch", "reference.pte", "xnnpack.pte", "bytes", "produced"],
            [
                [
                    version,
                    _torch_file(result["files"].get("reference.pte", {})),
                    _torch_file(result["files"].get("xnnpack.pte", {})),
                    note,
                    f"`{result['command']}`, {result['created']}",
                ]
                for version, result, note in _torch_rows(grids)
            ],
        )
        lines.append("")
    return lines


_CLASS = {
    "runs and matches": "pass",
    "refused": "fail",
    "wrong output": "fail",
    "crashed": "fail",
    "hung": "fail",
}


def html_sections(grids: Grids) -> str:
    """The same sections for the HTML matrix page; each cell's title is its command."""
    e = html.escape
    columns, rows = program_rows(grids)
    out = [
        "<h2>The grid: exported with (rows) x run on (columns)</h2>",
        '<table id="grid"><thead><tr><th>exported with</th><th>program</th>'
        + "".join(f"<th>on {e(c)}</th>" for c in columns)
        + "</tr></thead><tbody>",
    ]
    for exported, name, cells in rows:
        tds = []
        for c in cells:
            if c is None:
                tds.append('<td class="na">not run</td>')
            else:
                detail = "" if c["status"] == "runs and matches" else f"<br><small>{e(message(c))}</small>"
                tds.append(
                    f'<td class="{_CLASS.get(c["status"], "na")}" title="{e(c["command"])}">'
                    f"{e(short(c))}{detail}</td>"
                )
        out.append(f"<tr><td>{e(exported)}</td><td>{e(name)}</td>{''.join(tds)}</tr>")
    out.append("</tbody></table><ul>")
    for column in columns:
        grid = grids.by_release.get(column)
        out.append(
            f"<li>on {e(column)}: "
            + (
                f"<code>tox -e {e(tox_env(column))}</code>, {e(grid['created'])}, reference "
                f"library: {e(str(grid['runtime'].get('reference_library_how')))}"
                if grid
                else "not run"
            )
            + "</li>"
        )
    out.append("</ul>")
    release, runtimes, brows = blob_rows(grids)
    out.append("<h2>Blob grid: reference backend blobs x reference runtime versions</h2>")
    if release:
        out.append(
            '<table id="blob-grid"><thead><tr><th>blob</th>'
            + "".join(f"<th>runtime {e(r)}</th>" for r in runtimes)
            + "</tr></thead><tbody>"
        )
        for name, blob_cells in brows:
            blob_tds = "".join(
                '<td class="na">not run</td>'
                if c is None
                else f'<td class="{"pass" if c.get("agrees") else "fail"}" title="{e(c["command"])}">'
                f"{e(_blob_text(c))}<br><small>{e(' '.join(c.get('log', [])[:1]))}</small></td>"
                for c in blob_cells
            )
            out.append(f"<tr><td>{e(name)}</td>{blob_tds}</tr>")
        out.append(
            f'</tbody></table><p class="note">executorch {e(release)}, '
            f"{e(grids.by_release[release]['created'])}</p>"
        )
    else:
        out.append('<p class="note">not run</p>')
    out.append("<h2>The torch axis: executorch 1.5.1 with each torch</h2>")
    if grids.torch:
        out.append(
            '<table id="torch-axis"><thead><tr><th>torch</th><th>reference.pte</th><th>xnnpack.pte</th>'
            "<th>bytes</th><th>produced</th></tr></thead><tbody>"
        )
        for version, result, note in _torch_rows(grids):
            out.append(
                f"<tr><td>{e(version)}</td><td>{e(_torch_file(result['files'].get('reference.pte', {})))}"
                f"</td><td>{e(_torch_file(result['files'].get('xnnpack.pte', {})))}</td><td>{e(note)}</td>"
                f"<td><code>{e(result['command'])}</code>, {e(result['created'])}</td></tr>"
            )
        out.append("</tbody></table>")
    else:
        out.append('<p class="note">not run</p>')
    return "".join(out)
