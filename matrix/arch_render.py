"""The architecture section of the matrix: the runtime checks of the reference backend on x86-64
in-process, x86-64 through the runner and aarch64 through the runner under QEMU, read from
``<results>/arch/*.json`` (written by ``python -m matrix.arch_axis``) and rendered as markdown
lines or HTML. A file that is not JSON or lacks a field raises GridError (one line, naming the
file and the command that rewrites it); no files is a "not run" section."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from conformance.markdown_table import markdown_table
from matrix.arch_axis import RUNTIME_CHECKS
from matrix.grid_render import _read

#: The columns in order (matrix/arch_axis.py COLUMNS); others found in the folder follow.
ORDER = ("x86_64-in-process", "x86_64-runner", "aarch64-qemu")
FIX = "python -m matrix.arch_axis"
TITLE = "The architecture axis: the runtime checks of executorch 1.5.1 on each architecture"
INTRO = (
    "Every runtime check of the reference backend and every operator case, with the programs lowered "
    "once on this x86-64 host and run on each column (matrix/arch_axis.py): in-process through "
    "ExecuTorch's Python bindings, through the C++ runner on this host (`--target local`), and through "
    "the runner cross-built for aarch64 against the executorch wheel for manylinux_2_28_aarch64 "
    "(scripts/cross_build_runner.py), run under QEMU's user-mode emulator (`--target qemu-aarch64`). "
    "Seconds are the runtime part (lowering excluded) on this shared 2-core machine: per check the median "
    "of the rounds each file records (the runtime is loaded, RT-1, in the first), all checks a round's "
    "mean wall time."
)
#: What the emulated column does not show (docs/device-runner.md, "Another instruction set").
LIMITS = (
    (
        "Timing: QEMU translates the aarch64 code at run time, so the emulated seconds are this host's, "
        "not a device's; no speed claim and no timeout comes from that column."
    ),
    (
        "Memory: the emulated runner uses this host's memory, its 4 KiB pages and QEMU's own memory on top; "
        "a device's memory limit or a 16/64 KiB page kernel is not exercised."
    ),
    (
        "Below the program: the kernel is this host's, no device driver or accelerator is reached, and "
        "the x86-64 host orders memory more strongly than an aarch64 CPU, so a data race that only a "
        "weakly ordered CPU shows is not found here."
    ),
    (
        "Byte order: aarch64 Linux is little-endian, as x86-64: the column shows the blobs written on "
        "x86-64 read by another instruction set's code (unsigned char, the kit's table CRC-32C instead of "
        "SSE4.2), not by a big-endian machine; the header codec on big-endian s390x and the blobs at "
        "unaligned addresses are tested apart (tests/conformance/test_target_qemu_portability.py)."
    ),
)


def load(results: Path) -> dict[str, dict[str, Any]]:
    """column -> its result, in ORDER then by name; {} if the folder holds none."""
    found = {}
    for path in sorted((results / "arch").glob("*.json")):
        data = _read(path, FIX, ("column", "title", "machine", "checks", "operators", "seconds", "created"))
        found[data["column"]] = data
    return dict(
        sorted(found.items(), key=lambda kv: (ORDER.index(kv[0]) if kv[0] in ORDER else len(ORDER), kv[0]))
    )


def _check_text(check: dict[str, Any]) -> str:
    outcome = {"passed": "pass", "not_applicable": "n/a"}.get(check["outcome"], f"**{check['outcome']}**")
    return f"{outcome} ({check['seconds']:.2f} s)"


def _operators_text(column: dict[str, Any]) -> str:
    rows = [r for r in column["operators"] if r["cases"]]
    ran, passed = sum(r["ran"] for r in rows), sum(r["passed"] for r in rows)
    worst = max(
        (r for r in rows if r["worst_error"] is not None), key=lambda r: r["worst_error"], default=None
    )
    text = f"{passed}/{ran} cases of {len(rows)} operators pass"
    return text + (f", worst error {worst['worst_error']:.3g} ({worst['op']})" if worst else "")


def _where(column: dict[str, Any]) -> str:
    target = column.get("target")
    if not target:
        return f"{column['machine']}, in-process"
    emulated = f" under {target['emulator']}" if target.get("emulator") else ""
    return f"{target.get('machine', column['machine'])} (`--target {target['url']}`{emulated})"


def _built(column: dict[str, Any]) -> str:
    b = column.get("runner_build")
    if not b:
        return "none: ExecuTorch's Python bindings of the installed wheel"
    return (
        f"{b['compiler']}, against {b['executorch']}; needs glibc >= {b['glibc_needed']} "
        f"(executorch's libraries: >= {b['executorch_glibc_needed']})"
    )


def rows(columns: dict[str, dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """(row label, one text per column): each runtime check, the operator cases, where, speed, how built."""
    names = list(columns.values())
    found = {c for col in names for c in col["checks"]}
    checks = [c for c in RUNTIME_CHECKS if c in found] + sorted(found - set(RUNTIME_CHECKS))
    out = [
        (c, [_check_text(col["checks"][c]) if c in col["checks"] else "not run" for col in names])
        for c in checks
    ]
    out.append(("operator cases (OPS-2)", [_operators_text(col) for col in names]))
    out.append(("ran on", [_where(col) for col in names]))
    base = names[0]["seconds"] if names else 0
    runner = next(
        (col["seconds"] for col in names if col.get("target") and not col["target"].get("emulator")), None
    )

    def speed(col: dict[str, Any]) -> str:
        text = f"{col['seconds']:.1f} s"
        ratios = [f"{col['seconds'] / base:.1f}x in-process"] if base and col is not names[0] else []
        if runner and col.get("target") and col["target"].get("emulator"):
            ratios.append(f"{col['seconds'] / runner:.1f}x the x86-64 runner")
        return text + (f" ({', '.join(ratios)})" if ratios else "")

    out.append(("runtime seconds, all checks", [speed(col) for col in names]))
    out.append(("runner", [_built(col) for col in names]))
    out.append(("produced", [f"`{col['command']}`, {col['created']}" for col in names]))
    return out


def markdown(columns: dict[str, dict[str, Any]]) -> list[str]:
    lines = [f"## {TITLE}", ""]
    if not columns:
        return [*lines, f"not run: no results/arch/*.json (run `{FIX}`)", ""]
    titles = [col["title"] for col in columns.values()]
    lines += [
        INTRO,
        "",
        *markdown_table(["check", *titles], [[label, *texts] for label, texts in rows(columns)]),
    ]
    lines += ["", "Known limits of the emulated column:", "", *[f"- {limit}" for limit in LIMITS], ""]
    return lines


def html_section(columns: dict[str, dict[str, Any]]) -> str:
    e = html.escape
    out = [f"<h2>{e(TITLE)}</h2>"]
    if not columns:
        return out[0] + '<p class="note">not run</p>'
    out.append(f"<p>{e(INTRO.replace('`', ''))}</p>")
    out.append(
        '<table id="arch-axis"><thead><tr><th>check</th>'
        + "".join(f"<th>{e(col['title'])}</th>" for col in columns.values())
        + "</tr></thead><tbody>"
    )
    for label, texts in rows(columns):
        cells = "".join(
            f'<td class="{"pass" if t.startswith("pass") else "fail" if t.startswith("**") else "na"}">'
            f"{e(t.replace('**', '').replace('`', ''))}</td>"
            for t in texts
        )
        out.append(f"<tr><td>{e(label)}</td>{cells}</tr>")
    out.append("</tbody></table><ul>" + "".join(f"<li>{e(limit)}</li>" for limit in LIMITS) + "</ul>")
    return "".join(out)
