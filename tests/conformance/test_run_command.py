"""The one command line of ``executorch-conformance run`` (conformance/run/run_command.py): what each option
adds, in one order, and the form a person types; the CLI accepts every argv it builds."""

from __future__ import annotations

import sys

from conformance.cli import build_parser
from conformance.run.run_command import Options, run_command, shown


def test_every_option_is_spelled_once_in_one_order():
    options = Options(
        checks="RT,OPS-2",
        certify=True,
        expectations="e.toml",
        timeout=30.0,
        workers=2,
        ops="aten::relu",
        models="all",
    )
    assert run_command("pkg.mod:DESCRIPTOR", options, "out dir") == [
        sys.executable,
        "-m",
        "conformance.cli",
        "run",
        "--backend",
        "pkg.mod:DESCRIPTOR",
        "--report-dir",
        "out dir",
        "-n",
        "2",
        "--checks",
        "RT,OPS-2",
        "--certify",
        "--expectations",
        "e.toml",
        "--timeout",
        "30",
        "--ops",
        "aten::relu",
        "--models",
        "all",
    ]
    assert Options().argv() == ["-n", "1"]
    assert Options(timeout=0.5).argv()[-2:] == ["--timeout", "0.5"]


def test_shown_is_what_a_person_types_quoted():
    command = run_command("B", Options(certify=True), "/tmp/a b")
    assert shown(command) == "executorch-conformance run --backend B --report-dir '/tmp/a b' -n 1 --certify"


def test_the_cli_accepts_what_it_builds():
    options = Options(checks="RT", certify=True, timeout=30, workers=2, ops="aten::relu", models="all")
    args = build_parser().parse_args(run_command("B", options, "/tmp/x")[3:])
    assert (args.backend, args.report_dir, args.checks, args.certify, args.timeout) == (
        "B",
        "/tmp/x",
        "RT",
        True,
        30,
    )
    assert (args.ops, args.models) == ("aten::relu", "all")
