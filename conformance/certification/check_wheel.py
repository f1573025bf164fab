"""``executorch-conformance check-wheel``: a vendor wheel judged before anything is installed.

    executorch-conformance check-wheel VENDOR.whl [--against RELEASE ...] [--built-against RELEASE] [--json]

What it checks, as one table (rows: check, subject, verdict, why):
  abi          every shared library in the wheel through `abi check` against each release
               (its imports bound among its sibling libraries and the release's, the way the
               loader binds them; a runtime or registry of its own; the types it uses)
  paths        each library's RUNPATH/RPATH stays inside site-packages once installed, and
               each NEEDED library is found: in the wheel, in executorch, in another
               distribution through a RUNPATH, or among the system libraries manylinux allows
  requirement  the wheel's executorch requirement: a release it admits that the binaries
               must be rebuilt for (or that none of them supports) is an error; admitted
               releases with no measurements are listed
  platform     the wheel's platform tag against what auditwheel finds for its libraries
  layout       the wheel writes no file into the executorch distribution's folder

The release a library was built against comes from build_info.json next to it, else
--built-against, else the one measured release the wheel's requirement admits.

Exit codes
  check-wheel: 0 no errors (warnings may be listed); 1 at least one error; 2 the wheel or an
               argument cannot be used (no such file, not a wheel, unknown release, build
               release unknown).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path

from conformance.markdown_table import markdown_table

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2
ERROR, WARNING, OK, INFO = "error", "warning", "ok", "info"


@dataclasses.dataclass
class Row:
    check: str
    subject: str
    verdict: str
    severity: str
    why: str


class UnusableInput(ValueError):
    """The wheel or an argument cannot be used."""


def _executorch_specifier(requires: list[str]):
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import SpecifierSet

    found, spelled = None, []
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.name.lower().replace("_", "-") == "executorch" and not req.marker:
            found = (found or SpecifierSet()) & req.specifier
            spelled.append(str(req))
    return found, ", ".join(spelled)


def _build_release(lib: Path, given: str | None, admitted: list[str]) -> tuple[str, str]:
    from abi_checks.check import UnknownBuildRelease, built_against_from

    try:
        return built_against_from(lib, given)
    except UnknownBuildRelease:
        if len(admitted) == 1:
            return admitted[0], f"the wheel's executorch requirement, which admits only {admitted[0]}"
        raise UnusableInput(
            f"cannot tell which executorch release {lib.name} was built against: no build_info.json next to it "
            f"and the wheel's executorch requirement admits {', '.join(admitted) or 'no measured release'}; "
            "pass --built-against RELEASE"
        ) from None


def check_wheel(wheel_path: Path, against: list[str], built_against: str | None, work: Path) -> dict:
    from packaging.version import Version

    from abi_checks.check import FINE, PRIVATE, NoExecutorchImports, check_library
    from abi_checks.diff import available_releases, load_baseline
    from abi_checks.release_libraries import release_libraries
    from abi_checks.wheel import BadWheel, loaders, own_executorch_files, path_problems, unpack

    try:
        wheel = unpack(wheel_path, work)
    except BadWheel as exc:
        raise UnusableInput(str(exc)) from None
    known = available_releases()
    unknown = [r for r in against if r not in known]
    if unknown:
        raise UnusableInput(f"no ABI data for executorch {', '.join(unknown)}; measured: {', '.join(known)}")
    specifier, spelled = _executorch_specifier(wheel.requires)
    admitted = [r for r in known if specifier is not None and Version(r) in specifier]
    rows: list[Row] = []
    reports = []
    verdicts: dict[str, dict[str, str]] = {}  # library -> release -> verdict
    et_libraries = []
    from_others: set[str] = set()  # NEEDED names other distributions provide (through a RUNPATH)
    loaded_by = loaders(wheel, release_libraries(load_baseline(admitted[-1] if admitted else known[-1])))
    for lib in wheel.libraries:
        rel = lib.relative_to(wheel.root).as_posix()
        opener = loaded_by.get(lib.resolve())
        try:
            build, source = _build_release(lib, built_against, admitted)
            source = source.replace(str(wheel.root) + "/", "")
            report = check_library(lib, against, build, root=wheel.root, loaded_by=opener)
        except NoExecutorchImports:
            rows.append(
                Row(
                    "abi",
                    rel,
                    "not an ExecuTorch library",
                    INFO,
                    "it neither imports nor defines ExecuTorch's registry",
                )
            )
            continue
        except (ValueError, OSError) as exc:
            raise UnusableInput(f"{rel}: {exc}") from None
        et_libraries.append(rel)
        reports.append(report.as_dict())
        verdicts[rel] = {}
        for v in report.verdicts:
            verdicts[rel][v.release] = v.verdict
            why = "; ".join(v.reasons) or (
                "all imports bind; used layouts unchanged" + (f" ({'; '.join(v.notes)})" if v.notes else "")
            )
            if v.meaning:
                why += f". {v.meaning}. What to do: {v.fix}"
            severity = ERROR if v.verdict in PRIVATE else OK if v.verdict in FINE else INFO
            rows.append(
                Row(f"abi {v.release}", rel, v.verdict, severity, f"built against {build} ({source}): {why}")
            )
        base = release_libraries(load_baseline(build))
        for finding in path_problems(wheel, lib, base, opener):
            rows.append(Row("paths", rel, finding.severity, finding.severity, finding.text))
            if finding.from_other_distribution:
                from_others.add(finding.from_other_distribution)

    # The requirement against the verdicts.
    if et_libraries:
        if specifier is None:
            rows.append(
                Row(
                    "requirement",
                    "executorch",
                    "missing",
                    ERROR,
                    f"the wheel holds libraries built against executorch ({', '.join(et_libraries)}) but does not "
                    f"require executorch: pip installs it next to any release; pin the one minor release they are "
                    f"built for (for example executorch>=1.5,<1.6)",
                )
            )
        else:
            bad = {  # a runtime or registry of its own is an error of its own (the abi rows)
                r: [lib for lib in et_libraries if verdicts[lib].get(r) not in (*FINE, *PRIVATE)]
                for r in admitted
                if r in against
            }
            bad = {r: libs for r, libs in bad.items() if libs}
            for r, libs in bad.items():
                rows.append(
                    Row(
                        "requirement",
                        spelled,
                        f"admits {r}",
                        ERROR,
                        f"{spelled} admits executorch {r}, for which {', '.join(libs)} "
                        f"{'is' if len(libs) == 1 else 'are'} not usable ("
                        + ", ".join(f"{lib}: {verdicts[lib][r]}" for lib in libs)
                        + "): narrow the requirement or rebuild",
                    )
                )
            unmeasured = [r for r in admitted if r not in against]
            fine = [
                r
                for r in admitted
                if r in against and all(verdicts[lib].get(r) in FINE for lib in et_libraries)
            ]
            beyond = Version("99.0.0") in specifier or any(
                Version(f"{Version(known[-1]).major}.{Version(known[-1]).minor}.{p}") in specifier
                for p in range(Version(known[-1]).micro + 1, Version(known[-1]).micro + 20)
            )
            text = f"admits the measured releases {', '.join(admitted) or 'none'}"
            if fine:
                text += f"; binary compatible with {', '.join(fine)}"
            if unmeasured:
                text += f"; not judged here (not in --against): {', '.join(unmeasured)}"
            if beyond:
                text += f"; it also admits releases after {known[-1]}, which nothing here has measured"
            if not admitted:
                rows.append(
                    Row(
                        "requirement",
                        spelled,
                        "admits none",
                        ERROR,
                        f"{spelled} admits no measured executorch release ({', '.join(known)})",
                    )
                )
            elif not bad:
                rows.append(Row("requirement", spelled, "consistent", WARNING if beyond else OK, text))

    # Files written into executorch's folder.
    foreign = own_executorch_files(wheel)
    if foreign:
        rows.append(
            Row(
                "layout",
                "executorch/",
                "overwrites executorch",
                ERROR,
                f"the wheel writes {len(foreign)} files into the executorch distribution's folder ({', '.join(foreign[:3])}"
                f"{', ...' if len(foreign) > 3 else ''}): installing it replaces executorch's own files",
            )
        )

    rows += _platform_rows(wheel, against, from_others)
    errors = sum(r.severity == ERROR for r in rows)
    return {
        "wheel": str(wheel_path),
        "name": wheel.name,
        "version": wheel.version,
        "executorch_requirement": spelled or None,
        "admitted_releases": admitted,
        "against": against,
        "rows": [dataclasses.asdict(r) for r in rows],
        "abi_reports": reports,
        "errors": errors,
        "exit_code": EXIT_ERRORS if errors else EXIT_OK,
    }


def _platform_rows(wheel, against: list[str], from_others: set[str]) -> list[Row]:
    import importlib.util

    from abi_checks.diff import load_baseline
    from abi_checks.release_libraries import release_libraries
    from conformance.checks.packaging import audit_wheel, wheel_tag_problems
    from conformance.outcomes import CheckFailed

    tags = ", ".join(wheel.platform_tags)
    if not wheel.libraries:
        return [
            Row("platform", tags, "pure Python", OK if tags == "any" else WARNING, "no shared library in it")
        ]
    if importlib.util.find_spec("auditwheel") is None:
        return [
            Row(
                "platform",
                tags,
                "not checked",
                WARNING,
                "auditwheel is not installed (pip install auditwheel)",
            )
        ]
    try:
        audit = audit_wheel(wheel.path)
    except CheckFailed as exc:
        return [Row("platform", tags, "not analysed", WARNING, str(exc))]
    provided = set(from_others)
    for r in against:
        provided |= release_libraries(load_baseline(r)).names()
    problems, summary = wheel_tag_problems(wheel.path, audit, provided)
    if problems:
        return [Row("platform", tags, "wrong tag", ERROR, p) for p in problems]
    note = (
        " (a linux_* tag is a local build: pip on other machines will not pick it)"
        if any(t.startswith("linux_") for t in wheel.platform_tags)
        else ""
    )
    return [Row("platform", tags, "consistent", WARNING if note else OK, summary + note)]


def format_table(result: dict) -> str:
    lines = [
        f"wheel: {result['wheel']} ({result['name']} {result['version']})",
        f"executorch requirement: {result['executorch_requirement'] or 'none'}; judged against: {', '.join(result['against'])}",
        "",
    ]
    cells = []
    for r in result["rows"]:
        mark = (
            {"error": "ERROR ", "warning": "warning "}.get(r["severity"], "")
            if r["verdict"] != r["severity"]
            else ""
        )
        cells.append([r["check"], r["subject"], f"{mark}{r['verdict']}", r["why"]])
    lines += markdown_table(["check", "subject", "verdict", "why"], cells)
    lines += ["", f"{result['errors']} error(s): exit {result['exit_code']}"]
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    from abi_checks.diff import available_releases

    against = args.against or available_releases()
    with tempfile.TemporaryDirectory(prefix="check-wheel-") as tmp:
        try:
            result = check_wheel(Path(args.wheel), against, args.built_against, Path(tmp))
        except UnusableInput as exc:
            print(f"executorch-conformance check-wheel: {exc}", file=sys.stderr)
            return EXIT_USAGE
    print(json.dumps(result, indent=1) if args.json else format_table(result))
    return int(result["exit_code"])


def add_subcommand(subparsers) -> None:
    """Adds ``check-wheel`` to the executorch-conformance parser."""
    cmd = subparsers.add_parser(
        "check-wheel",
        help="judge a vendor wheel before installing it: ABI of its libraries, paths, requirement, platform tag",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cmd.add_argument("wheel", help="the vendor's .whl file")
    cmd.add_argument(
        "--against", nargs="+", metavar="RELEASE", help="releases to judge (default: every measured one)"
    )
    cmd.add_argument("--built-against", metavar="RELEASE", help="release the libraries were built against")
    cmd.add_argument("--json", action="store_true", help="machine-readable output")
    cmd.set_defaults(func=_run)
