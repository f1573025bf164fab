"""The report of a run as the plugin makes it: ``build_report`` (the typed ``Report`` of the results,
with the environment, the backend's identity and the SHA-256 of its runtime libraries) and
``write_report`` (sealed and written)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.report.records import SCHEMA, Backend, OperatorRow, Options, Report, Result, RuntimeLibrary
from conformance.report.rows import ResultRow
from conformance.report.sealing import file_sha256, json_numbers, seal
from conformance.report.verdicts import profile_verdicts, summarize, verdict
from conformance.version_numbers import installed_version


def _vendor_version_of(dist: str) -> str | None:
    """The version of distribution ``dist`` where the vendor's interpreter finds it (with ``run
    --vendor-python`` another environment than this one's), None if not installed there."""
    import importlib.metadata as md

    from conformance.judge.environment import vendor_import_path

    for found in md.distributions(name=dist, path=vendor_import_path()):
        return found.version
    return None


def _vendor_python() -> dict[str, Any] | None:
    """What ran the vendor side (``run --vendor-python``): path, executable, python, executorch and torch
    versions; None when the vendor processes ran this environment's interpreter."""
    from conformance.vendor import interpreter as vendor_interpreter

    interpreter = vendor_interpreter.current()
    return None if interpreter is None else interpreter.record()


def runtime_libraries(descriptor: Any) -> list[dict[str, Any]]:
    """Path and sha256 of each runtime library the descriptor names; an error is recorded, not raised."""
    from conformance.descriptor import raised

    try:
        paths = [str(p) for p in descriptor.runtime_libraries()]
    except Exception as exc:  # noqa: BLE001  what the vendor's code raised (recorded in the vendor process)
        return [{"path": None, "sha256": None, "error": f"runtime_libraries() raised {raised(exc)}"}]
    libraries: list[dict[str, Any]] = []
    for path in paths:
        try:
            libraries.append({"path": path, "sha256": file_sha256(path)})
        except OSError as exc:
            libraries.append(
                {"path": path, "sha256": None, "error": f"{type(exc).__name__}: {exc.strerror or exc}"}
            )
    return libraries


def build_report(
    *,
    descriptor: Any,
    results: Sequence[ResultRow],
    certify: bool,
    interrupted: bool,
    selected: list[str],
    options: dict[str, Any],
    command: str | None,
    duration_s: float,
    operators: list[dict[str, Any]] | None = None,
    target: dict[str, Any] | None = None,
    models: list[dict[str, Any]] | None = None,
    previous_report: dict[str, Any] | None = None,
    simulator: dict[str, Any] | None = None,
) -> Report:
    """The report of a run (docs/report-schema.md), without its content hash. ``operators``: the rows of
    the OPS checks (one per operator and dtype), reported as the ``operators`` section when given.
    ``target``: where the runtime checks ran (--target: its URL, uname, runner version, the sha256 of the
    runner's libraries there), reported as the ``target`` section when given. ``models``: the rows of the
    model tier (``--et-models``), reported as the ``models`` section when given; they never change the
    verdict. ``previous_report``: the claim that ``results`` carried over (``Claim.to_dict``). ``simulator``:
    the vendor's simulator that computed the delegates, reported as the ``simulator`` section when given."""
    import datetime
    import platform
    import shlex
    import sys

    from conformance.version import REPORT_SCHEMA_VERSION, SUITE_VERSION

    capabilities = descriptor.capabilities()
    verdict_text, reasons, warnings = verdict(results, certify, capabilities, interrupted)
    return Report(
        schema=SCHEMA,
        schema_version=REPORT_SCHEMA_VERSION,
        suite_version=SUITE_VERSION,
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        command=command or shlex.join(sys.argv),
        mode="certify" if certify else "standard",
        options=Options.from_dict(options),
        environment={
            "executorch": installed_version("executorch"),
            "torch": installed_version("torch"),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "machine": platform.machine(),
            "vendor_python": _vendor_python(),
        },
        backend=Backend(
            id=descriptor.backend_id,
            distribution=descriptor.distribution,
            version=descriptor.version,
            installed_version=_vendor_version_of(descriptor.distribution),
            capabilities=capabilities,
            runtime_libraries=[RuntimeLibrary.from_dict(lib) for lib in runtime_libraries(descriptor)],
            declared_deviations=descriptor.operators.deviations() or None,
        ),
        selected=list(selected),
        results=[Result.from_dict(r) for r in results],
        summary=summarize(results),
        interrupted=interrupted,
        verdict=verdict_text,
        verdict_reasons=reasons,
        warnings=warnings,
        certified=verdict_text == "certified",
        duration_s=round(duration_s, 1),
        operators=None if operators is None else [OperatorRow.from_dict(row) for row in operators],
        target=target,
        models=models,
        deprecations=list(descriptor.deprecations()) or None,
        profiles=profile_verdicts(results, certify, capabilities, interrupted),
        previous_report=previous_report,
        simulator=simulator,
    )


def write_report(report: Report | dict[str, Any], path: str | Path) -> dict[str, Any]:
    """Seals ``report`` (its numbers made JSON's: ``json_numbers``) and writes it to ``path`` (sorted keys,
    an indent of 2, a final newline); the sealed JSON object."""
    sealed = seal(json_numbers(report.to_dict() if isinstance(report, Report) else report))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(sealed, indent=2, sort_keys=True, allow_nan=False) + "\n")
    return sealed
