"""``executorch-conformance verify | badge | sign | keygen``: certification a third party can trust.

    executorch-conformance verify FILE [--trusted-key PUB.pem ...] [--identity ID [--issuer URL]]
                                       [--require-signature | --allow-unsigned] [--library LIB ...] [--wheel WHL ...]
                                       [--rerun [--expectations FILE]] [--at YYYY-MM-DD]
    executorch-conformance badge FILE [--out-dir DIR] [--trusted-key PUB.pem ...]
    executorch-conformance sign REPORT (--key KEY.pem | --sigstore) [--wheel WHL ...] [--library LIB ...] [--out F]
    executorch-conformance keygen [--out KEY.pem]

FILE is a report (report.json), a key-signed attestation (report.intoto.jsonl)
or a Sigstore bundle (report.sigstore.json).

Exit codes
  verify:  0 the report verifies (its verdict is printed: certified, conformant
           or not conformant); 1 rejected (one line per problem), a signed file
           given without --trusted-key or --identity (UNVERIFIED; --allow-unsigned
           checks its content alone), or the re-run differs; 2 usage error.
  badge:   0 written; 1 the report does not verify (one line); 2 usage error.
  sign, keygen: 0 written; 2 error (one line).
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from pathlib import Path
from typing import Any, TextIO

EXIT_REJECTED, EXIT_USAGE = 1, 2
#: verify prints at most this many problems of one report.
MAX_LINES = 40


#: The longest line verify and badge print (a forged report may hold a reason of megabytes).
MAX_LINE = 4000


def _printable(text: str) -> str:
    """``text`` with every character a terminal acts on (escape sequences, line breaks, bidi controls)
    written as its escape, and cut to MAX_LINE characters."""
    if len(text) > MAX_LINE:
        text = f"{text[:MAX_LINE]}… ({len(text) - MAX_LINE} more characters)"
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _say(text: object = "", *, file: TextIO | None = None, flush: bool = False) -> None:
    """One line of output. The strings of a report are the forger's: they cannot add, hide or rewrite a
    line of what verify says."""
    print(_printable(str(text)), file=file or sys.stdout, flush=flush)


class _Rejected(Exception):
    """The document cannot be verified at all; one line says why."""


class _Unverified(Exception):
    """A signed document whose signature nobody was asked to check; one line says how to check it."""


def _unchecked(args: argparse.Namespace, what: str, how: str) -> str:
    """The signature line of a signed document whose signature is not checked, if the user said so
    (--allow-unsigned); otherwise _Unverified. A gate that forgets the key must not pass a tampered
    envelope (docs/certification.md, "Verify a report")."""
    if getattr(args, "allow_unsigned", True):  # badge: a picture of a report, not a verification
        return f"{what}, but the signature was NOT checked (--allow-unsigned; give {how} to check it)"
    raise _Unverified(
        f"{what}, but no {how} was given, so the signature was not checked; give {how}, or "
        "--allow-unsigned to check the content alone"
    )


def _load(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any] | None, str]:
    """(report, statement or None, signature line) of ``args.file``, the signature checked when asked.

    Raises _Rejected for an unusable file or a signature that does not verify.
    """
    from conformance.certification import attestation as att
    from conformance.certification.strict_json import Unreadable, read_json

    try:
        doc = read_json(args.file)
    except Unreadable as exc:
        raise _Rejected(str(exc)) from None
    keys = [att.load_public_key(k) for k in args.trusted_key or []]
    identity = getattr(args, "identity", None)
    try:
        if att.is_envelope(doc):
            if identity:
                raise _Rejected(
                    "is an attestation signed with a key, not a Sigstore bundle: verify it with "
                    "--trusted-key, not --identity"
                )
            _, stmt = att.open_envelope(doc)
            if keys:
                keyid = att.verify_envelope(doc, keys)
                signature = f"valid Ed25519 signature by trusted key {keyid[:16]}…"
            else:
                signature = _unchecked(args, "signed", "--trusted-key PUB.pem")
            return stmt["predicate"], stmt, signature
        if att.is_sigstore_bundle(doc):
            if keys:
                raise _Rejected(
                    "is a Sigstore bundle: verify it with --identity (and --issuer), not --trusted-key"
                )
            if identity:
                _, stmt = att.sigstore_verify(doc, identity, args.issuer)
                signature = f"valid Sigstore signature by {identity}" + (
                    f" ({args.issuer})" if args.issuer else ""
                )
            else:
                _, stmt = att.sigstore_payload(doc)
                signature = _unchecked(args, "Sigstore bundle", "--identity and --issuer")
            return stmt["predicate"], stmt, signature
    except att.AttestationError as exc:
        raise _Rejected(str(exc)) from None
    if keys or identity or getattr(args, "require_signature", False):
        raise _Rejected(
            "is an unsigned report, but a signature is required (--trusted-key, --identity or "
            "--require-signature); verify the attestation made by `executorch-conformance sign`"
        )
    return doc, None, "none: an unsigned report proves nothing about who ran the suite"


def _at(value: str | None) -> datetime.date | None:
    if value is None:
        return None
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"--at {value!r} is not a date (YYYY-MM-DD)") from None


def _artifact_problems(
    args: argparse.Namespace, report: dict[str, Any], stmt: dict[str, Any] | None
) -> list[str]:
    from conformance.certification import attestation as att

    problems, digests = [], {}
    for wheel in args.wheel or []:
        digest, found = att.wheel_problems(report, wheel)
        problems += found
        digests[f"--wheel {Path(wheel).name}"] = digest
    for library in args.library or []:
        digest, found = att.library_problems(report, library)
        problems += found
        digests[f"--library {Path(library).name}"] = digest
    if stmt is not None:
        problems += att.subject_problems(stmt, digests)
    return problems


def _verify(args: argparse.Namespace) -> int:
    from conformance.certification import attestation as att
    from conformance.certification.verify import check_report
    from conformance.results.summary_text import simulated_line

    if args.allow_unsigned and (args.require_signature or args.trusted_key or args.identity):
        raise ValueError(
            "--allow-unsigned skips the signature check; it cannot go with --require-signature, "
            "--trusted-key or --identity"
        )
    if args.require_signature and not (args.trusted_key or args.identity):
        raise ValueError(
            "--require-signature needs --trusted-key PUB.pem (or --identity for a Sigstore bundle)"
        )
    if args.issuer and not args.identity:
        raise ValueError("--issuer goes with --identity")
    today = _at(args.at)
    try:
        report, stmt, signature = _load(args)
    except _Rejected as exc:
        _say(f"{args.file}: REJECTED: {exc}")
        return EXIT_REJECTED
    except _Unverified as exc:
        _say(f"{args.file}: UNVERIFIED: {exc}")
        return EXIT_REJECTED
    result = check_report(report, today=today)
    problems = result.problems
    if not problems and stmt is not None:
        problems = att.statement_problems(stmt, report)
    if not problems:
        problems = _artifact_problems(args, report, stmt)
    if problems:
        if result.verdict is None:  # not a report, or malformed: one line
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            _say(f"{args.file}: REJECTED: {'; '.join(problems[:3])}{more}")
        else:
            _say(f"{args.file}: REJECTED")
            for p in problems[:MAX_LINES]:
                _say(f"  - {p}")
            if len(problems) > MAX_LINES:
                _say(f"  - (and {len(problems) - MAX_LINES} more problems)")
        return EXIT_REJECTED
    backend, env = report["backend"], report["environment"]
    _say(f"{args.file}: verified")
    _say(
        f"  backend: {backend['id']} {backend['version']} ({backend['distribution']}) on executorch "
        f"{env.get('executorch')}, {env.get('machine')}; suite {report['suite_version']}, created "
        f"{report['created']}"
    )
    target = report.get("target")
    if isinstance(target, dict):
        machine = f"; machine {target['machine']}" if target.get("machine") else ""
        emulated = f" under {target['emulator']}" if target.get("emulator") else ""
        _say(
            f"  runtime checks ran on: {target.get('url')} ({target.get('uname')}), "
            f"{target.get('runner_version')}{machine}{emulated}"
        )
    _say(f"  verdict: {result.verdict_line()}")
    _say(f"  profiles: {result.profiles_line()}")
    simulated = simulated_line(report)
    if simulated:
        _say(f"  {simulated}")
    _say(f"  signature: {signature}")
    for library in args.library or []:
        _say(f"  --library {Path(library).name}: the runtime library the report tested")
    for wheel in args.wheel or []:
        _say(
            f"  --wheel {Path(wheel).name}: {backend['distribution']} {backend['version']}, matches the report"
        )
    if args.rerun:
        return _rerun(args, report)
    return 0


def _rerun(args: argparse.Namespace, report: dict[str, Any]) -> int:
    from conformance.certification.rerun import environment_notes, rerun, rerun_command
    from conformance.run.run_command import shown

    if "options" not in report:
        raise ValueError(f"the report (schema {report['schema_version']}) records no options to re-run with")
    command = shown(rerun_command(report["options"], "<tmp>", args.expectations))
    from conformance.certification.rerun_identity import identity_problems, installed_backend
    from conformance.descriptor import DescriptorError

    spec = report["options"]["backend"]
    try:
        here = installed_backend(spec)
    except DescriptorError as exc:
        _say(f"  re-run refused: the backend {spec!r} the report's options name cannot be loaded here: {exc}")
        return EXIT_REJECTED
    mismatches = identity_problems(report["backend"], here, spec)
    if mismatches:
        _say(
            f"  re-run refused: the report describes backend {report['backend']['id']} "
            f"{report['backend']['version']} ({report['backend']['distribution']}), but its options name "
            f"{spec!r}, which is not that backend here; nothing was re-run:"
        )
        for line in mismatches[:MAX_LINES]:
            _say(f"    - {line}")
        _say("    install the backend (and runtime libraries) the report tested, then re-run")
        return EXIT_REJECTED
    _say(f"  re-running: {command}", flush=True)
    new, diffs = rerun(report, expectations=args.expectations)
    for note in environment_notes(report, new):
        _say(f"  re-run note: {note}")
    if diffs:
        _say(f"  re-run: {len(diffs)} of {len(report['results'])} checks differ here:")
        for d in diffs:
            _say(f"    - {d}")
        return EXIT_REJECTED
    _say(f"  re-run: the same outcome for all {len(report['results'])} checks")
    return 0


def _badge(args: argparse.Namespace) -> int:
    from conformance.certification import attestation as att
    from conformance.certification.badge import write_badge
    from conformance.certification.verify import check_report

    try:
        report, stmt, _ = _load(args)
    except _Rejected as exc:
        _say(f"executorch-conformance badge: {args.file} {exc}", file=sys.stderr)
        return EXIT_REJECTED
    problems = check_report(report).problems
    if not problems and stmt is not None:
        problems = att.statement_problems(stmt, report)
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        _say(
            f"executorch-conformance badge: {args.file} does not verify: {'; '.join(problems[:3])}{more}; "
            f"see `executorch-conformance verify {args.file}`",
            file=sys.stderr,
        )
        return EXIT_REJECTED
    out_dir = args.out_dir or Path(args.file).parent
    for path in write_badge(report, out_dir):
        _say(path)
    return 0


def _default_out(report_path: Path, suffix: str) -> Path:
    stem = report_path.name.removesuffix(".json")
    return report_path.with_name(stem + suffix)


def _sign(args: argparse.Namespace) -> int:
    from conformance.certification import attestation as att
    from conformance.certification.strict_json import Unreadable, read_json
    from conformance.certification.verify import check_report

    if bool(args.key) == bool(args.sigstore):
        raise ValueError("give exactly one of --key KEY.pem and --sigstore")
    try:
        report = read_json(args.report)
    except Unreadable as exc:
        raise ValueError(f"{args.report} {exc}") from None
    problems = check_report(report).problems
    if problems:
        raise ValueError(
            f"{args.report} does not verify, so it is not signed: {problems[0]}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
        )
    subject = att.subjects(report, args.wheel or [], args.library or [])
    payload = att.statement_bytes(att.statement(report, subject))
    if args.key:
        key = att.load_private_key(args.key)
        out = Path(args.out) if args.out else _default_out(Path(args.report), ".intoto.jsonl")
        att.write_envelope(att.sign_envelope(payload, key), out)
        _say(
            f"{out}: in-toto attestation signed by Ed25519 key {att.key_id(key.public_key())[:16]}…, "
            f"subjects: {', '.join(s['name'] for s in subject)}"
        )
    else:
        out = Path(args.out) if args.out else _default_out(Path(args.report), ".sigstore.json")
        out.write_text(
            att.sigstore_sign(payload, args.identity_token or os.environ.get("SIGSTORE_IDENTITY_TOKEN"))
            + "\n",
            encoding="utf-8",
        )
        _say(
            f"{out}: in-toto attestation in a Sigstore bundle, subjects: {', '.join(s['name'] for s in subject)}"
        )
    return 0


def _keygen(args: argparse.Namespace) -> int:
    from conformance.certification.attestation import generate_key

    private, public, keyid = generate_key(args.out)
    _say(f"private key: {private} (keep it secret)")
    _say(f"public key:  {public} (publish it)")
    _say(f"key id:      {keyid}")
    return 0


def _add_signature_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--trusted-key",
        action="append",
        metavar="PUB.pem",
        help="Ed25519 public key (PEM) whose signature is trusted; repeatable",
    )


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """Adds verify, badge, sign and keygen to the ``executorch-conformance`` sub-command parsers."""
    verify = sub.add_parser(
        "verify",
        help="re-check a report or a signed attestation and print its verdict",
        epilog=__doc__[__doc__.index("Exit codes") :],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument(
        "file", metavar="FILE", help="report.json, REPORT.intoto.jsonl or REPORT.sigstore.json"
    )
    _add_signature_options(verify)
    verify.add_argument(
        "--identity", help="Sigstore: the signer identity the certificate must name (e-mail or URI)"
    )
    verify.add_argument("--issuer", help="Sigstore: the OIDC issuer the certificate must name")
    verify.add_argument("--require-signature", action="store_true", help="refuse an unsigned report")
    verify.add_argument(
        "--allow-unsigned",
        action="store_true",
        help="check a signed attestation's content without its signature (default: without --trusted-key "
        "or --identity, a signed file is UNVERIFIED, exit 1)",
    )
    verify.add_argument(
        "--library",
        action="append",
        metavar="LIB",
        help="a runtime library file that must be one the report tested; repeatable",
    )
    verify.add_argument(
        "--wheel",
        action="append",
        metavar="WHL",
        help="the backend's wheel: its name, version and runtime libraries must match; repeatable",
    )
    verify.add_argument(
        "--rerun",
        action="store_true",
        help="re-run the suite here with the report's options and list the checks that differ",
    )
    verify.add_argument(
        "--expectations", help="with --rerun: the expectations file, if not at its recorded path"
    )
    verify.add_argument(
        "--at", metavar="YYYY-MM-DD", help="judge the validity window on this date (default: today)"
    )
    verify.set_defaults(func=_verify)

    badge = sub.add_parser("badge", help="write badge.svg and badge.json for a report that verifies")
    badge.add_argument("file", metavar="FILE", help="report.json or a signed attestation of it")
    badge.add_argument("--out-dir")
    _add_signature_options(badge)
    badge.set_defaults(func=_badge)

    sign = sub.add_parser("sign", help="sign a report as an in-toto attestation (DSSE)")
    sign.add_argument("report", metavar="REPORT")
    sign.add_argument("--key", metavar="KEY.pem", help="Ed25519 private key (PEM, PKCS#8) to sign with")
    sign.add_argument(
        "--sigstore",
        action="store_true",
        help="sign keylessly with Sigstore (needs the 'sigstore' extra and a network)",
    )
    sign.add_argument(
        "--identity-token",
        help="with --sigstore: an OIDC token (default: $SIGSTORE_IDENTITY_TOKEN, "
        "an ambient CI credential, or a browser login)",
    )
    sign.add_argument(
        "--wheel", action="append", metavar="WHL", help="the backend's wheel: a subject; repeatable"
    )
    sign.add_argument(
        "--library",
        action="append",
        metavar="LIB",
        help="a runtime library (must be the one tested): a subject; repeatable. Default: the "
        "runtime libraries the report records",
    )
    sign.add_argument(
        "--out",
        help="where to write (default: beside the report, its name with .json replaced: report.json gives "
        "report.intoto.jsonl, or report.sigstore.json with Sigstore)",
    )
    sign.set_defaults(func=_sign)

    keygen = sub.add_parser("keygen", help="make an Ed25519 key pair for sign")
    keygen.add_argument(
        "--out",
        default="conformance-signing-key.pem",
        help="private key file; the public key goes to <name>.pub.pem",
    )
    keygen.set_defaults(func=_keygen)


def main(argv: list[str] | None = None) -> int:
    """For tests: these sub-commands alone, with the error handling of conformance.cli."""
    parser = argparse.ArgumentParser(prog="executorch-conformance")
    add_subcommands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (OSError, ValueError) as exc:
        _say(f"executorch-conformance {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
