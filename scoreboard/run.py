"""Runs the conformance suite on each row of the scoreboard and keeps the results.

    python -m scoreboard.run                       # every row of scoreboard/rows.json, full runs
    python -m scoreboard.run openvino              # one row
    python -m scoreboard.run --row mine=my_pkg.conformance:DESCRIPTOR   # any descriptor as one more row
    python -m scoreboard.run xnnpack --ops aten::add.Tensor --no-models --results build/sb  # a short form

Each row is one ``executorch-conformance run`` (every check, the full operator corpus and, unless
``--no-models``, the model tier) in a process of its own, with its report directory under
``--results`` (default scoreboard/results/ROW): report.json, junit.xml and run.json (the command, when
it ran, its wall time, the versions of what it ran on). Paths of this machine in the report are
written relative (``<venv>``, ``<repo>``, ``<tmp>``) and the report sealed again, so the results
can be committed and compared. Render them with ``python -m scoreboard.render``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from xml.sax.saxutils import escape as xml_escape

from conformance.run.run_command import Options, run_command, shown
from conformance.version_numbers import installed_version

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
ROWS = HERE / "rows.json"
RESULTS = HERE / "results"
#: what a row's report directory keeps (output.log, the badge and the page are made again or not kept)
KEPT = ("report.json", "junit.xml")


def rows(path: Path = ROWS) -> dict[str, dict[str, str]]:
    """Row name -> {'backend': descriptor spec, 'title': ..., and for a row whose backend needs an
    environment of its own, 'vendor_python' (its interpreter, relative to the repository) and 'setup' (the
    script that makes it)}, in scoreboard order."""
    data = json.loads(path.read_text())
    return {name: dict(row) for name, row in data["rows"].items()}


def versions() -> dict[str, str | None]:
    """The versions of the distributions a scoreboard row depends on (None: not installed)."""
    return {
        name: installed_version(name)
        for name in ("executorch", "torch", "openvino", "nncf", "executorch-conformance")
    }


def cpu_flags() -> list[str]:
    """The CPU features that decide a backend's default precision (bf16 on OpenVINO's CPU plugin)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    flags = (
        set(re.search(r"^flags\s*:(.*)$", text, re.MULTILINE).group(1).split()) if "flags" in text else set()
    )
    return sorted(flags & {"avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile"})


def redact(text: str, tmp: str, xml: bool = False) -> str:
    """``text`` with this machine's paths written relative: the venv, the repository, the scratch dir, as
    ``<venv>``, ``<repo>`` and ``<tmp>``; ``xml``: ``text`` is an XML document (junit.xml), so the names are
    written escaped, as the characters ``<`` and ``>`` must be in its text and attribute values."""
    for real, name in (
        (sys.prefix, "<venv>"),
        (str(REPO), "<repo>"),
        (tmp, "<tmp>"),
        (tempfile.gettempdir(), "<tmp>"),
    ):
        written = xml_escape(name) if xml else name
        for spelled in {real, os.path.realpath(real)}:
            # the whole path only: .venv must not turn .venv-arm into <venv>-arm
            text = re.sub(re.escape(spelled) + r"(?![\w.-])", written, text)
    return text


def run_row(
    name: str,
    backend: str,
    out: Path,
    models: bool,
    ops: str | None,
    timeout: float,
    checks: str | None = None,
    vendor_python: str | None = None,
) -> dict:
    """One full suite run of ``backend`` into ``out``, its vendor processes run by ``vendor_python`` (a path
    relative to the repository) when given; returns its run.json record."""
    from conformance.report import seal

    with tempfile.TemporaryDirectory(prefix=f"scoreboard-{name}-") as tmp:
        options = Options(checks=checks, timeout=timeout, ops=ops, models="all" if models else None)
        vendor = ["--vendor-python", vendor_python] if vendor_python else []
        argv = [*run_command(backend, options, tmp), *vendor]
        command = shown(
            [
                *run_command(backend, options, out.relative_to(REPO) if out.is_relative_to(REPO) else out),
                *vendor,
            ]
        )
        started = datetime.datetime.now(datetime.timezone.utc)
        clock = time.monotonic()
        print(f"scoreboard: {name}: {command}", flush=True)
        proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)
        wall = time.monotonic() - clock
        report_path = Path(tmp) / "report.json"
        if not report_path.is_file():
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
            raise SystemExit(f"scoreboard: {name}: the run wrote no report (exit {proc.returncode}): {tail}")
        out.mkdir(parents=True, exist_ok=True)
        for stale in out.iterdir():
            if stale.is_file():
                stale.unlink()
        report = json.loads(redact(report_path.read_text(), tmp))
        (out / "report.json").write_text(json.dumps(seal(report), indent=2, sort_keys=True) + "\n")
        for kept in KEPT[1:]:
            if (Path(tmp) / kept).is_file():
                (out / kept).write_text(
                    redact((Path(tmp) / kept).read_text(), tmp, xml=kept.endswith(".xml"))
                )
    record = {
        "row": name,
        "backend": backend,
        "command": command,
        "started": started.isoformat(timespec="seconds"),
        "wall_s": round(wall, 1),
        "exit_code": proc.returncode,
        "versions": versions(),
        "cpu_flags": cpu_flags(),
    }
    (out / "run.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    print(f"scoreboard: {name}: {report['verdict']} in {wall:.0f} s -> {out}", flush=True)
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scoreboard.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="rows of scoreboard/rows.json to run (default: all)")
    parser.add_argument(
        "--row", action="append", default=[], metavar="NAME=SPEC", help="one more row: a descriptor"
    )
    parser.add_argument("--results", type=Path, default=RESULTS, help="where each row's directory goes")
    parser.add_argument("--no-models", action="store_true", help="leave the model tier out")
    parser.add_argument("--ops", help="only these operators (a short form; the committed results use all)")
    parser.add_argument("--timeout", type=float, default=300.0, help="per-check timeout (default 300 s)")
    parser.add_argument(
        "--checks", help="only these check ids or areas (a short form; the committed results run all)"
    )
    args = parser.parse_args(argv)
    known = rows()
    chosen: dict[str, str] = {}
    for name in args.names or ([] if args.row else list(known)):
        if name not in known:
            parser.error(f"no row {name!r} in {ROWS.name} (rows: {', '.join(known)}); give --row NAME=SPEC")
        chosen[name] = known[name]["backend"]
    for given in args.row:
        name, sep, spec = given.partition("=")
        if not sep or not name or not spec:
            parser.error(f"--row {given!r} is not NAME=SPEC (for example mine=my_pkg.conformance:DESCRIPTOR)")
        chosen[name] = spec
    if shutil.which("executorch-conformance") is None and not (Path(sys.prefix) / "bin").is_dir():
        parser.error(
            "executorch-conformance is not installed in this environment (bash scripts/bootstrap.sh)"
        )
    for name, backend in chosen.items():
        row = known.get(name, {})
        vendor_python = row.get("vendor_python")
        if vendor_python and not (REPO / vendor_python).is_file():
            parser.error(
                f"row {name!r} runs its vendor processes in {vendor_python}, which does not exist: "
                f"make it with `bash {row.get('setup', 'its setup script')}` first"
            )
        run_row(
            name,
            backend,
            args.results / name,
            not args.no_models and row.get("models", True),
            args.ops,
            args.timeout,
            args.checks,
            vendor_python,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
