"""The conformance checks from a vendor's own test suite, in the spirit of scikit-learn's
``check_estimator`` and ``parametrize_with_checks``::

    from conformance.testing import check_backend, parametrize_with_checks

    def test_backend_is_conformant():
        check_backend("your_package.conformance:DESCRIPTOR")  # BackendNotConformant names each failure

    @parametrize_with_checks("your_package.conformance:DESCRIPTOR", checks="AOT,BLOB")
    def test_conformance(check):  # one test per check: AOT-1, AOT-2, ...
        check()

Both run the same suite, isolated the same way, as ``executorch-conformance run``: the checks judge in
a process of their own, started from this one, and the backend's code runs only in the vendor
processes that one starts. So nothing of the vendor's pytest process (its imports, conftest.py,
plugins, monkeypatches) reaches the process that judges. ``parametrize_with_checks`` runs the suite
once per pytest process for its backend and options (at the first of its tests that runs); each test
then reports its check's result: passed, skipped when not applicable, xfail when the expectations file
declares the failure, failed otherwise with the check's reason. Under pytest-xdist each worker
process runs the suite once.

A backend is named as for ``--backend`` ('module:attribute' or an entry point name), or given as the
descriptor object itself when it is a module-level attribute of an importable module. The judging
process gets this process's ``sys.path`` (as PYTHONPATH), so a descriptor next to the tests is found.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

from conformance.descriptor import BackendDescriptor, DescriptorError
from conformance.registry import selects
from conformance.report import Report
from conformance.run.run_command import Options, run_command

#: Exit codes of ``executorch-conformance run`` (conformance.cli) that end a run without a report.
_EXIT_USAGE, _EXIT_INTERNAL, _EXIT_DESCRIPTOR = 2, 3, 4


class BackendNotConformant(AssertionError):
    """The run's verdict is 'not conformant': the message lists the reasons; ``report`` is the run's."""

    def __init__(self, message: str, report: Report) -> None:
        super().__init__(message)
        self.report = report


def backend_spec(backend: str | BackendDescriptor) -> str:
    """The --backend text for ``backend``: a string as given, a descriptor object as the
    'module:attribute' it is found at (TypeError if it is at none: a descriptor made inside a function
    cannot be loaded by the vendor process)."""
    if isinstance(backend, str):
        return backend
    if not isinstance(backend, BackendDescriptor):
        raise TypeError(
            f"check_backend takes a BackendDescriptor or its 'module:attribute', not a {type(backend).__name__}"
        )
    found = []
    for name, module in list(sys.modules.items()):
        if name == "__main__" or not isinstance(module, types.ModuleType) or module.__spec__ is None:
            continue
        for attr, value in list(vars(module).items()):
            if value is backend and not attr.startswith("__"):
                found.append((name.rsplit(".", 1)[-1].startswith("test_"), name, attr))
    if found:  # a vendor module before a test module that imported the descriptor by name
        _test, name, attr = min(found)
        return f"{name}:{attr}"
    raise TypeError(
        f"the descriptor for backend {backend.backend_id!r} is not an attribute of any importable module, so "
        "the vendor process cannot load it: define it at module level (DESCRIPTOR = BackendDescriptor(...)) "
        "or pass its 'module:attribute'"
    )


def run_suite(spec: str, options: Options, report_dir: str | Path | None = None) -> Report:
    """Runs ``executorch-conformance run`` for ``spec`` in a process of its own and returns its report;
    DescriptorError if the descriptor cannot be loaded, ValueError for options the CLI refuses,
    RuntimeError if the run ended without a report."""
    directory = Path(report_dir) if report_dir else Path(tempfile.mkdtemp(prefix="conformance-"))
    command = run_command(spec, options, directory)
    # This process's import path, so that the vendor process finds the descriptor's module; the run
    # starts in the report folder, so that no conftest.py of the vendor's tests is near it.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(Path(p or ".").resolve()) for p in sys.path)}
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=directory, stdin=subprocess.DEVNULL, check=False
    )
    said = (done.stderr.strip() or done.stdout.strip()).splitlines()
    last = said[-1] if said else "(no output)"
    if done.returncode == _EXIT_DESCRIPTOR:
        raise DescriptorError(last.removeprefix("executorch-conformance run: descriptor error: "))
    if done.returncode == _EXIT_USAGE:
        raise ValueError(last.removeprefix("executorch-conformance run: "))
    report = directory / "report.json"
    if not report.exists():
        raise RuntimeError(
            f"executorch-conformance run for {spec!r} exited with {done.returncode} without a report: {last} "
            f"(its log: {directory / 'output.log'})"
        )
    return Report.from_dict(json.loads(report.read_text()))


def check_backend(
    backend: str | BackendDescriptor,
    *,
    checks: str | None = None,
    certify: bool = False,
    expectations: str | None = None,
    timeout: float | None = None,
    workers: int = 1,
    report_dir: str | Path | None = None,
    raise_on_failure: bool = True,
) -> Report:
    """Runs the suite's checks (``checks``: ids or areas, 'AOT,RT-3'; default all) against ``backend`` and
    returns the report; raises BackendNotConformant with the verdict's reasons when the verdict is 'not
    conformant' (unless ``raise_on_failure`` is false), DescriptorError when the descriptor cannot be
    loaded. ``report_dir`` keeps report.json, junit.xml and the logs (default: a new temporary folder)."""
    options = Options(checks, certify, expectations, timeout, workers)
    report = run_suite(backend_spec(backend), options, report_dir)
    if raise_on_failure and report.verdict == "not conformant":
        reasons = "\n".join(f"  - {r}" for r in report.verdict_reasons or ())
        raise BackendNotConformant(
            f"{report.backend.id} {report.backend.version} is not conformant:\n{reasons}", report
        )
    return report


#: (spec, options) -> the report of the one run parametrize_with_checks makes for them in this process
_runs: dict[tuple[str, Options], Report | BaseException] = {}


def _shared_run(spec: str, options: Options) -> Report:
    key = (spec, options)
    if key not in _runs:
        try:
            _runs[key] = run_suite(spec, options)
        except (DescriptorError, ValueError, RuntimeError) as exc:
            _runs[key] = exc
    found = _runs[key]
    if isinstance(found, BaseException):
        raise found
    return found


@dataclasses.dataclass(frozen=True)
class ConformanceCheck:
    """One check of a ``parametrize_with_checks`` test: calling it reports the check's result from the
    shared run (pytest.skip / pytest.xfail / pytest.fail, or returns when it passed)."""

    spec: str
    id: str
    clause: str
    level: str
    title: str
    options: Options

    def __call__(self) -> None:
        import pytest

        report = _shared_run(self.spec, self.options)
        result = next((r for r in report.results if r.id == self.id), None)
        if result is None:
            pytest.fail(f"{self.id}: the run of {self.spec!r} reported no result for it", pytrace=False)
        if result.outcome == "passed":
            return
        if result.outcome == "not_applicable":
            pytest.skip(f"{self.id} not applicable: {result.reason}")
        if result.outcome == "expected_failure":
            pytest.xfail(f"{self.id}: {result.reason}")
        pytest.fail(
            f"{self.id} ({self.level}, {self.clause}: {self.title}) {result.outcome.replace('_', ' ')}: "
            f"{result.reason}",
            pytrace=False,
        )

    def __str__(self) -> str:
        return self.id


def parametrize_with_checks(
    backend: str | BackendDescriptor,
    *,
    checks: str | None = None,
    expectations: str | None = None,
    timeout: float | None = None,
) -> Any:
    """A ``pytest.mark.parametrize`` over the suite's checks (``checks``: ids or areas; default all) for
    ``backend``: the test takes one argument, ``check``, and calls it."""
    import pytest

    from conformance.checks import all_checks

    spec = backend_spec(backend)
    wanted = None
    if checks is not None:
        from conformance.run.run_options import OptionsError, parse_selection

        try:
            wanted = parse_selection(checks, "checks")
        except OptionsError as exc:
            raise ValueError(str(exc)) from None
    options = Options(checks=checks, expectations=expectations, timeout=timeout)
    selected = [c for c in all_checks() if selects(wanted, c.id)]
    return pytest.mark.parametrize(
        "check",
        [
            pytest.param(ConformanceCheck(spec, c.id, c.clause, c.level, c.title, options), id=c.id)
            for c in selected
        ],
    )
