"""``executorch-conformance matrix``: render the release matrix table."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


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
            [sys.executable, "-m", "conformance.cli", "abi", "check", str(library_path()), "--against",
             rel.executorch, "--json"], capture_output=True, text=True,
        )
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError:
            data = {"error": (proc.stdout + proc.stderr).strip()[-300:]}
        (folder / "abi.json").write_text(json.dumps(data, indent=2) + "\n")


def _render(args: argparse.Namespace) -> int:
    from matrix.render import render

    results = Path(args.results)
    if not args.no_abi:
        _abi_for_each_release(results)
    text = render(results, Path(args.out), shlex.join(["executorch-conformance", *sys.argv[1:]]))
    print(text)
    return 0


def add_subcommands(subparsers) -> None:
    matrix = subparsers.add_parser("matrix", help="the release matrix")
    sub = matrix.add_subparsers(dest="matrix_command", required=True)
    render = sub.add_parser("render", help="write matrix/README.md from matrix/results/")
    render.add_argument("--results", default=str(REPO / "matrix" / "results"))
    render.add_argument("--out", default=str(REPO / "matrix" / "README.md"))
    render.add_argument("--no-abi", action="store_true", help="do not (re)run abi check")
    render.set_defaults(func=_render)
