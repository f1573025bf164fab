"""``executorch-conformance abi``: compare release baselines, check a vendor library.

    executorch-conformance abi list
    executorch-conformance abi diff OLD NEW [--all] [--json]
    executorch-conformance abi check LIB.so --against RELEASE [RELEASE ...] [--built-against RELEASE] [--json]

Exit codes
  abi diff:  0 no changes or additions only; 1 binary-breaking changes (symbol removed, runtime
             library changed, layout changed, vtable changed, enum value changed); 2 error.
  abi check: 0 binary compatible with every release given (or the release's own runtime);
             1 must rebuild for at least one; 2 error (unknown release, not an ELF file, missing
             file, build release unknown); 3 not an ExecuTorch backend library (it neither imports
             ExecuTorch symbols nor carries a registry: nothing to check); 4 it carries its own
             ExecuTorch runtime or backend registry (a static link, a rebuilt runtime): the
             backends it registers are invisible to executorch.runtime.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys

EXIT_ERROR, EXIT_NOTHING_TO_CHECK, EXIT_OWN_REGISTRY = 2, 3, 4


def _err(cmd: str, exc: BaseException | str) -> int:
    print(f"executorch-conformance abi {cmd}: {exc}", file=sys.stderr)
    return EXIT_ERROR


def _list(args: argparse.Namespace) -> int:
    from abi_checks.diff import available_releases, load_baseline
    from conformance.markdown_table import markdown_table

    rows = []
    for r in available_releases():
        b = load_baseline(r)
        s = b["symbols"]
        rows.append(
            [
                r,
                b["runtime_library"]["path"],
                f"{s['executorch_exported']} / {s['total_exported']}",
                f"{b['layouts']['status']} ({len(b['layouts']['types'])} types)",
            ]
        )
    header = ["release", "runtime library", "executorch symbols / exported", "layouts"]
    print("\n".join(markdown_table(header, rows)))
    return 0


def _diff(args: argparse.Namespace) -> int:
    from abi_checks.diff import UnknownRelease, diff_baselines, exit_code, format_changes, load_baseline

    try:
        old, new = load_baseline(args.old), load_baseline(args.new)
    except (UnknownRelease, OSError, ValueError) as exc:
        return _err("diff", exc)
    try:
        changes = diff_baselines(old, new)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:  # a baseline of the right shape outside
        return _err(
            "diff",
            f"{args.old} and {args.new} cannot be compared: a baseline field is malformed "
            f"({type(exc).__name__}: {exc})",
        )
    if args.json:
        print(
            json.dumps(
                {
                    "old": old["release"],
                    "new": new["release"],
                    "exit_code": exit_code(changes),
                    "changes": [c.as_dict() for c in changes],
                },
                indent=1,
            )
        )
    else:
        print(format_changes(old, new, changes, limit=None if args.all else 20))
    return exit_code(changes)


def _check(args: argparse.Namespace) -> int:
    from abi_checks.check import NoExecutorchImports, UnknownBuildRelease, check_library, format_report
    from abi_checks.diff import NotABaseline, UnknownRelease
    from abi_checks.elf import NotAnElfFile

    try:
        report = check_library(args.library, args.against, args.built_against)
    except NoExecutorchImports as exc:
        print(f"executorch-conformance abi check: {exc}", file=sys.stderr)
        return EXIT_NOTHING_TO_CHECK
    except (UnknownRelease, UnknownBuildRelease, NotAnElfFile, NotABaseline, OSError) as exc:
        return _err("check", exc)
    except Exception as exc:  # a malformed ELF that pyelftools cannot read
        from elftools.common.exceptions import ELFError

        if isinstance(exc, ELFError):
            return _err("check", f"{args.library}: unreadable ELF file ({exc})")
        raise
    if args.json:
        print(json.dumps({**report.as_dict(), "exit_code": report.exit_code}, indent=1))
    elif args.markdown:
        from abi_checks.check import format_markdown

        print(format_markdown(report, "executorch-conformance " + shlex.join(sys.argv[1:])), end="")
    else:
        print(format_report(report))
    return report.exit_code


def add_subcommands(subparsers) -> None:
    """Adds the ``abi`` command group to the executorch-conformance parser."""
    abi = subparsers.add_parser(
        "abi",
        help="C++ ABI of ExecuTorch releases: diff two baselines, check a backend library",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    abi_sub = abi.add_subparsers(dest="abi_command", required=True)

    lst = abi_sub.add_parser("list", help="the releases with a baseline")
    lst.set_defaults(func=_list)

    diff = abi_sub.add_parser(
        "diff",
        help="changes between two releases' baselines, classified by severity",
        description="Exit code: 0 none or additions only, 1 binary-breaking, 2 error.",
    )
    diff.add_argument("old", help="release (e.g. 1.5.0) or path to a baseline .json")
    diff.add_argument("new", help="release (e.g. 1.5.1) or path to a baseline .json")
    diff.add_argument(
        "--all", action="store_true", help="list every symbol change (default: first 20 per category)"
    )
    diff.add_argument("--json", action="store_true", help="machine-readable output")
    diff.set_defaults(func=_diff)

    check = abi_sub.add_parser(
        "check",
        help="is a backend library binary compatible with these releases?",
        description="Exit code: 0 binary compatible with all, 1 must rebuild for some, 2 error, "
        "3 not an ExecuTorch backend library, 4 it carries its own runtime or registry.",
    )
    check.add_argument("library", help="the backend's shared library (.so)")
    check.add_argument(
        "--against",
        nargs="+",
        required=True,
        metavar="RELEASE",
        help="releases to judge it against (see: executorch-conformance abi list)",
    )
    check.add_argument(
        "--built-against",
        metavar="RELEASE",
        help="release it was built against (default: build_info.json next to the library)",
    )
    out = check.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="machine-readable output")
    out.add_argument("--markdown", action="store_true", help="a commit-ready page (date, command, table)")
    check.set_defaults(func=_check)
