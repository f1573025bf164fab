"""``executorch-conformance``: run the suite, make a badge, verify a report,
inspect a .pte, list the checks."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.run.run_options import RunOptions

#: Exit codes of ``executorch-conformance run`` (docs/certification.md).
EXIT_OK = 0  # conformant, or certified in certify mode
EXIT_NOT_CONFORMANT = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_DESCRIPTOR = 4
EXIT_INTERRUPTED = 130


def _run(args: argparse.Namespace) -> int:
    from conformance.descriptor import DescriptorError
    from conformance.run.run_options import RunOptions

    if args.workers < 1:
        raise UsageError(f"-n/--workers must be 1 (in this process) or more, not {args.workers}")
    # The plugin's options, validated as the plugin validates them (OptionsError, a ValueError: exit 2),
    # before anything starts; named as this command spells them.
    options = RunOptions(
        backend=args.backend,
        timeout=args.timeout,
        memory_limit=args.memory_limit,
        certify=args.certify,
        no_cache=args.no_cache,
        checks=args.checks,
        ops=args.ops,
        models=args.models,
        expectations=args.expectations,
        previous_report=args.previous_report,
        vendor_python=args.vendor_python,
        target=args.target,
        runner=args.runner,
        command=shlex.join(["executorch-conformance", *(args.argv or [])]),
        entry="cli",
    )
    from conformance.run.target_option import checked_runner

    runner = checked_runner(options, reach=True)  # OptionsError: exit 2, before anything starts
    options.use_vendor_python()  # before the first vendor process (prepare, below)
    if args.expectations:
        from conformance.checks import check_ids
        from conformance.expectations import ExpectationsError, load_expectations

        try:
            load_expectations(args.expectations, check_ids())
        except ExpectationsError as exc:
            raise UsageError(str(exc)) from None
    from conformance.fdcapture import output_to
    from conformance.vendor.remote_descriptor import prepare

    report_dir = Path(args.report_dir)
    report_dir.mkdir(parents=True, exist_ok=True)
    log = report_dir / "output.log"  # what pytest and third-party code print during the run
    log.unlink(missing_ok=True)
    from conformance.judge.environment import removed_note

    note = removed_note("run")  # the log, not the terminal: the vendor process still has them
    if note:
        log.write_text(note + "\n", encoding="utf-8", errors="backslashreplace")
    vendor_log = report_dir / "vendor-process.log"  # what the vendor's code prints
    vendor_log.unlink(missing_ok=True)
    for stale in ("report.json", "badge.svg", "badge.json"):  # a run that dies must leave none behind
        (report_dir / stale).unlink(missing_ok=True)
    # multiprocessing's resource tracker (a process of its own, started with this interpreter's -W options)
    # warns at exit about the semaphores of a vendor process that was killed, on the terminal after the
    # table. It cleans them up either way: the warning says nothing the report does not.
    sys.warnoptions.append("ignore::UserWarning:multiprocessing.resource_tracker")
    try:  # in a vendor process: the backend's module is never imported in this one
        prepared = prepare(
            args.backend, vendor_log, options.timeout, options.memory_bytes, _warm_ahead(args, options)
        )
    except DescriptorError as exc:
        print(f"executorch-conformance run: descriptor error: {exc}", file=sys.stderr)
        return EXIT_DESCRIPTOR
    try:
        options.operators(prepared.descriptor)  # OptionsError naming an operator the backend does not declare
        handed: list[object] = [prepared]
        if options.previous_report:  # CarryOverError (a ValueError: exit 2) before any check runs
            from conformance.certification.carry_over import HandedClaim, read_claim
            from conformance.version import SUITE_VERSION

            claim = read_claim(
                options.previous_report, prepared.descriptor.backend_id, options.certify, SUITE_VERSION
            )
            handed.append(HandedClaim(options.previous_report, claim))
        options = dataclasses.replace(options, report=str(report_dir / "report.json"), runner=runner)
        if options.target is not None and runner is not None:
            from conformance.run.target_option import CheckedRunner

            handed.append(CheckedRunner(options.target, runner))
        return _run_pytest(args, options, handed, report_dir, log, output_to)
    finally:
        prepared.discard()


def _warm_ahead(args: argparse.Namespace, options: RunOptions) -> bool:
    """Whether the run starts a vendor process for its work ahead while the backend is described: in this
    process's run (xdist workers start none ahead), when NDATA-5's program will be made ahead."""
    from conformance.checks.named_data import makes_program_ahead

    return args.workers == 1 and makes_program_ahead(options.selected, options.memory_bytes)


def _run_pytest(
    args: argparse.Namespace, options, handed: list[object], report_dir: Path, log: Path, output_to
) -> int:
    """Runs the suite's pytest session in this process; ``handed``: the plugin objects the run takes over
    (the vendor process that described the backend, the claim already read)."""
    import pytest

    report_path = report_dir / "report.json"
    pytest_args = [
        "--pyargs",
        "conformance.suite",
        *options.pytest_args(),  # the plugin's options: it owns and validates them (conformance.run.run_options)
        "--junitxml",
        str(report_dir / "junit.xml"),
        "-p",
        "no:cacheprovider",
        # No conftest.py of the directory the command runs in (a vendor's tests/conftest.py, which pytest
        # loads from a test* directory of the working directory): its code would run in the judge.
        "--noconftest",
        "-o",
        "addopts=",
        "-o",
        "junit_suite_name=executorch-conformance",
        "-q",
        "--no-header",
        "-rN",
        "--disable-warnings",
    ]
    # Only the suite's own plugins: a pytest11 entry point of the vendor's package (or of anything else
    # installed) would run in the process that judges. The xdist workers inherit the setting.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    pytest_args += ["-p", "conformance.plugin"]
    if args.workers != 1:
        pytest_args += ["-p", "xdist.plugin", "-n", str(args.workers)]
    if args.verbose:
        code = pytest.main(pytest_args, plugins=handed)
    else:  # quiet: progress and the table on the terminal, everything else in output.log
        import io

        from conformance.run.console import Console, NamedPlugin

        console = Console(io.TextIOWrapper(os.fdopen(os.dup(1), "wb"), write_through=True, errors="replace"))
        pytest_args += ["--tb=short", "-p", "no:cacheprovider"]
        with output_to(log):
            code = pytest.main(pytest_args, plugins=[*handed, NamedPlugin(console, "et-console")])
    if not report_path.exists() and code == pytest.ExitCode.INTERRUPTED:
        print(
            "executorch-conformance run: interrupted before the checks started; no report or badge was written",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    if not report_path.exists():
        tail = log.read_text(errors="replace").strip().splitlines()[-15:] if log.exists() else []
        print(
            "executorch-conformance run: no report was written" + (f"; the end of {log}:" if tail else ""),
            file=sys.stderr,
        )
        for line in tail:
            print(f"  {line}", file=sys.stderr)
        return EXIT_INTERNAL
    report = json.loads(report_path.read_text())
    if not args.verbose:
        console.summary(report, report_path.resolve())
        print(f"log: {log.resolve()}")
    from conformance.results.artifacts import found

    made = found(report_path)  # the plugin wrote them with the report (conformance.results.artifacts)
    per_operator = f" and {made.operators_junit.resolve()}" if made.operators_junit is not None else ""
    print(f"junit: {(report_dir / 'junit.xml').resolve()}{per_operator}")
    if report.get("interrupted"):
        print(
            "the run was interrupted: the report says NOT CONFORMANT and no badge was written",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    if made.badge is not None:
        print(f"badge: {made.badge[0].resolve()} and {made.badge[1].resolve()}")
    print(f"page: {made.page.resolve()}")
    return EXIT_OK if report["verdict"] in ("conformant", "certified") else EXIT_NOT_CONFORMANT


class UsageError(ValueError):
    """The command line is wrong; the message says how."""


def _list(args: argparse.Namespace) -> int:
    if args.backends:
        from conformance.descriptor import SHIPPED_DESCRIPTORS, available_backends

        installed = available_backends()
        print("installed (entry points of executorch_conformance.backends; --backend NAME):")
        for name, value in sorted(installed.items()):
            print(f"  {name:24} {value}")
        if not installed:
            print("  none")
        print("shipped with the suite, for ExecuTorch's own delegates (--backend MODULE:ATTRIBUTE):")
        for name, value in SHIPPED_DESCRIPTORS.items():
            print(f"  {name:24} {value}")
        return 0
    from conformance.checks import all_checks
    from conformance.registry import not_checked_lines

    for c in all_checks():
        print(f"{c.id:7} {c.clause:9} {c.level:6} {c.title}")
    for line in not_checked_lines():
        print(line)
    return 0


def _inspect(args: argparse.Namespace) -> int:
    from conformance.inspection.inspect_pte import inspect_file

    print(inspect_file(args.pte, load=args.load))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="executorch-conformance",
        description=__doc__.splitlines()[0],
        epilog="Help and errors cite documents as docs/NAME.md: 'executorch-conformance docs NAME' prints one.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the suite against a backend")
    run.add_argument(
        "--backend", required=True, help="entry point name or module:attribute of a BackendDescriptor"
    )
    run.add_argument("--expectations", help="TOML file of expected failures and not-applicable checks")
    run.add_argument(
        "--certify", action="store_true", help="forbid expected failures; all mandatory checks must pass"
    )
    run.add_argument(
        "--previous-report",
        metavar="JSON",
        help="the report of this backend by an earlier suite release: a failure of a requirement changed "
        "since is a warning for the rest of the minor series that changed it (docs/api-stability.md)",
    )
    run.add_argument(
        "--no-cache",
        action="store_true",
        help="lower everything again: neither read nor write the lowering cache (a certify run never reads it)",
    )
    run.add_argument("--report-dir", default="reports", help="where report.json, junit.xml and the badge go")
    run.add_argument("--checks", help="comma-separated check IDs or areas to run (default: all)")
    run.add_argument(
        "--ops",
        help="comma-separated operator schema names (aten::add.Tensor,...): the OPS checks "
        "run only these (default: every declared operator)",
    )
    run.add_argument(
        "--models",
        nargs="?",
        const="all",
        metavar="NAMES",
        help="also lower and run standard architectures (ResNet, MobileNetV2, ViT, M5; 'all' or comma-separated "
        "names): how much was delegated and whether outputs match, in the report's models section "
        "(report-only: the verdict does not depend on it)",
    )
    run.add_argument(
        "-n",
        "--workers",
        type=int,
        default=1,
        help="pytest-xdist workers (default 1: the checks run in this process; the backend's code always "
        "runs in a vendor process of its own)",
    )
    run.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show pytest's own output and what the backend prints, instead of progress lines",
    )
    run.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="the longest a check may wait for the backend's code (default 120); each program load "
        "(the runtime's init()) has this long of its own, not charged to the check",
    )
    run.add_argument(
        "--memory-limit",
        type=float,
        metavar="GB",
        help="the most memory the backend's code may allocate, in GiB (default: 3/4 of this machine's)",
    )
    run.add_argument(
        "--target",
        metavar="URL",
        help="run the runtime checks (RT, NDATA, OPS) on a target through the C++ runner: local, "
        "ssh://[user@]host[:port][/dir] or adb[://serial][/dir] (docs/device-runner.md)",
    )
    run.add_argument(
        "--runner",
        metavar="PATH",
        help="the conformance runner built for the backend (build/runner/conformance_runner), with --target",
    )
    run.add_argument(
        "--vendor-python",
        metavar="PATH",
        help="the python of the vendor's environment: every vendor process (describing, lowering, loading, "
        "executing) runs it, while this command and its judge stay in their own environment, which needs "
        "no backend installed (docs/certification.md, 'Two environments')",
    )
    run.set_defaults(func=_run)

    lst = sub.add_parser(
        "list", help="list the checks with their clauses (or, with --backends, the backends)"
    )
    lst.add_argument(
        "--backends",
        action="store_true",
        help="list the installed backends and the descriptors the suite ships",
    )
    lst.set_defaults(func=_list)

    insp = sub.add_parser("inspect", help="describe a .pte: plans, delegates, blob headers, runtime verdicts")
    insp.add_argument("pte")
    insp.add_argument(
        "--load",
        metavar="BACKEND",
        action="append",
        default=[],
        help="load this backend's runtime first (descriptor name or module:attr); repeatable",
    )
    insp.set_defaults(func=_inspect)
    from abi_checks.cli import add_subcommands as _add_abi
    from conformance.certification.certification_cli import add_subcommands as _add_certification
    from conformance.certification.check_wheel import add_subcommand as _add_check_wheel
    from conformance.compat.cli import add_subcommand as _add_compat
    from conformance.docs_command import add_subcommand as _add_docs
    from conformance.new_backend import add_subcommands as _add_new_backend
    from conformance.release_grid.grid_cli import add_subcommand as _add_release_grid
    from conformance.reproduce.reproduce_cli import add_subcommand as _add_reproduce
    from conformance.results.page_cli import add_subcommands as _add_page
    from matrix.cli import add_subcommands as _add_matrix

    _add_certification(sub)
    _add_page(sub)
    _add_abi(sub)
    _add_check_wheel(sub)
    _add_matrix(sub)
    _add_new_backend(sub)
    _add_compat(sub)
    _add_release_grid(sub)
    _add_reproduce(sub)
    _add_docs(sub)
    return parser


#: The commands that judge: they run in the isolated judging process (conformance/judge/environment.py).
JUDGING_COMMANDS = frozenset({"run", "verify", "badge", "sign", "release-grid", "reproduce"})


def main(argv: list[str] | None = None) -> int:
    program = argv is None  # the console script or ``python -m conformance.cli``, not a caller's test
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    from conformance.judge import environment as judge_environment

    if program and args.command in JUDGING_COMMANDS and not judge_environment.is_isolated():
        judge_environment.reexec(argv)  # never returns
    try:
        return args.func(args)
    except (OSError, ValueError) as exc:
        from conformance.certification.certification_cli import (
            _printable,  # a message may quote a report's strings
        )

        print(f"executorch-conformance {args.command}: {_printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"executorch-conformance {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001  a bug of this tool: one line, not a traceback, and exit code 3
        import traceback

        where = traceback.extract_tb(exc.__traceback__)[-1]
        print(
            f"executorch-conformance {args.command}: internal error: {type(exc).__name__}: {exc} "
            f"(at {Path(where.filename).name}:{where.lineno}; please report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
