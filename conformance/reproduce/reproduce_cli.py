"""``executorch-conformance reproduce REPORT CASE``: a standalone reproducer of one operator case of a report.

CASE is a case key as the report writes it (``aten::rsqrt|float32|subnormal``). The backend is the one the
report names (its ``options.backend``), read in a vendor process as a run reads it (``--vendor-python`` for
another environment). Writes ``--out`` (default ``reproducers/<op>-<dtype>-<case>``): ``reproduce.py``,
``case.pt2``, ``inputs.pt``, ``partitioners.pkl``; prints how to run it. Exit status 0, or 2 with one line
naming what is wrong (the report, the case, the backend).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

EXIT_USAGE = 2


class ReproduceError(ValueError):
    """The reproducer cannot be written; the message says why and what to do."""


def _case_keys(report: dict) -> dict[str, str]:
    """Case key -> outcome, for every case row of the report."""
    found = {}
    for row in report.get("operators") or []:
        for c in row.get("case_results") or []:
            if isinstance(c, dict) and isinstance(c.get("key"), str):
                found[c["key"]] = str(c.get("outcome"))
    return found


def _report(path: str, key: str) -> tuple[str, dict]:
    from conformance.certification.strict_json import Unreadable, read_json

    try:
        report = read_json(path)
    except Unreadable as exc:
        raise ReproduceError(f"{path} {exc}") from None
    options = report.get("options") if isinstance(report, dict) else None
    backend = options.get("backend") if isinstance(options, dict) else None
    if not isinstance(backend, str):
        raise ReproduceError(
            f"{path} is not a report of executorch-conformance run: it names no options.backend"
        )
    keys = _case_keys(report)
    if key not in keys:
        failing = [k for k, o in keys.items() if o not in ("passed", "excluded", "not_run")]
        hint = (
            f"its failing cases: {', '.join(failing[:8])}{', ...' if len(failing) > 8 else ''}"
            if failing
            else ("it has no failing case" if keys else "it has no operator cases (run the OPS checks)")
        )
        raise ReproduceError(
            f"{path} has no operator case {key!r} (give the key as the report writes it); {hint}"
        )
    return backend, report


def reproduce(args: argparse.Namespace) -> int:
    from conformance.outcomes import CheckFailed
    from conformance.reproduce.script import render
    from conformance.vendor import interpreter as vendor_interpreter
    from conformance.vendor.process import VendorProcess
    from conformance.vendor.task_registry import WRITE_REPRODUCER

    try:
        backend, _ = _report(args.report, args.case)
        if args.vendor_python:
            try:
                vendor_interpreter.use(vendor_interpreter.probe(args.vendor_python))
            except vendor_interpreter.VendorPythonError as exc:
                raise ReproduceError(f"--vendor-python: {exc}") from None
        out = Path(args.out or Path("reproducers") / re.sub(r"[^A-Za-z0-9_.]+", "-", args.case).strip("-"))
        if out.exists() and any(out.iterdir()):
            raise ReproduceError(f"{out} exists and is not empty; give --out a new or empty directory")
        vendor = VendorProcess(backend)
        try:
            made = vendor.call(
                WRITE_REPRODUCER,
                args.case,
                str(out),
                what=f"writing a reproducer of {args.case}",
                timeout=args.timeout,
            )
        except CheckFailed as exc:
            raise ReproduceError(f"backend {backend!r}: {exc}") from None
        finally:
            vendor.close()
    except ReproduceError as exc:
        print(f"executorch-conformance reproduce: {exc}", file=sys.stderr)
        return EXIT_USAGE
    script = out / "reproduce.py"
    script.write_text(
        render(
            made["title"],
            str(args.report),
            made["distribution"],
            made["rtol"],
            made["atol"],
            made["libraries"],
            made.get("simulator"),
            made.get("backend_id"),
        )
    )
    script.chmod(0o755)
    print(f"wrote {out}: reproduce.py, case.pt2, inputs.pt, partitioners.pkl")
    print(f"run it where the backend is installed: python {script}  (exit 1 while the defect is there)")
    return 0


def add_subcommand(sub) -> None:
    parser = sub.add_parser(
        "reproduce",
        help="write a standalone reproducer of one operator case of a report",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument("report", metavar="REPORT", help="the report.json of a run")
    parser.add_argument(
        "case", metavar="CASE", help="the case key, as the report writes it: 'aten::rsqrt|float32|subnormal'"
    )
    parser.add_argument("--out", metavar="DIR", help="where to write (default: reproducers/<case>)")
    parser.add_argument("--vendor-python", metavar="PATH", help="the python of the backend's environment")
    parser.add_argument(
        "--timeout", type=float, default=300.0, metavar="SECONDS", help="the longest writing may take"
    )
    parser.set_defaults(func=reproduce)
