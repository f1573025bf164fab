"""``executorch-conformance matrix``: render the release matrix table.

    executorch-conformance matrix render [--results DIR] [--out README.md] [--html FILE] [--no-abi]

Exit codes
  matrix render: 0 written; 2 the results folder holds no release results, a result cannot be
                 read, or an output file cannot be written (one line).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: Exit codes of ``matrix render``: 0 written; 2 the results cannot be read or the output cannot be written.
EXIT_ERROR = 2


def _abi_for_each_release(results: Path) -> None:
    """abi check of this environment's reference runtime library against each release."""
    import subprocess

    from matrix.releases import RELEASES
    from reference_backend.runtime import library_path

    for rel in RELEASES:
        folder = results / rel.executorch
        if not folder.exists():
            continue
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "conformance.cli",
                "abi",
                "check",
                str(library_path()),
                "--against",
                rel.executorch,
                "--json",
            ],
            capture_output=True,
            text=True,
        )
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError:
            data = {"error": (proc.stdout + proc.stderr).strip()[-300:]}
        (folder / "abi.json").write_text(json.dumps(data, indent=2) + "\n")


def _render(args: argparse.Namespace) -> int:
    from matrix.releases import RELEASES
    from matrix.render import render, render_html

    results = Path(args.results)
    command = shlex.join(["executorch-conformance", *sys.argv[1:]])
    if not (results.is_dir() and any((results / r.executorch).is_dir() for r in RELEASES)):
        print(
            f"executorch-conformance matrix render: {results} holds no release results "
            f"(a folder per release: {', '.join(r.executorch for r in RELEASES)})",
            file=sys.stderr,
        )
        return EXIT_ERROR
    if not args.no_abi:
        _abi_for_each_release(results)
    try:
        text = render(results, Path(args.out), command)
        if args.html:
            render_html(results, Path(args.html), command)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(
            f"executorch-conformance matrix render: cannot render {results}: {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return EXIT_ERROR
    print(text)
    if args.html:
        print(f"html: {Path(args.html).resolve()}")
    return 0


def add_subcommands(subparsers) -> None:
    matrix = subparsers.add_parser(
        "matrix",
        help="the release matrix",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = matrix.add_subparsers(dest="matrix_command", required=True)
    render = sub.add_parser("render", help="write matrix/README.md from matrix/results/")
    render.add_argument("--results", default=str(REPO / "matrix" / "results"))
    render.add_argument("--out", default=str(REPO / "matrix" / "README.md"))
    render.add_argument("--html", metavar="FILE", help="also write the matrix as a self-contained HTML page")
    render.add_argument("--no-abi", action="store_true", help="do not (re)run abi check")
    render.set_defaults(func=_render)
