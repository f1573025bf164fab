"""The pytest plugin: the suite's options, the shared context, and the report of the run with every file
beside it (page, badge, per-case JUnit), written in its own session hooks so that plain ``pytest --pyargs
conformance.suite`` writes what ``executorch-conformance run`` does. Inactive unless ``--et-backend`` is
given.

The run's state is one ``ConformanceRun`` kept in ``config.stash`` (on the controller and on every xdist
worker). What it collects from the tests' reports is a ``CheckResults`` (conformance/run/check_results.py);
the options are a ``RunOptions`` (conformance/run/run_options.py). The report always holds every selected
check: one that never reported (interrupted run, lost worker) is ``not_run``, and the verdict is computed
over that full list.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.checks import all_checks
from conformance.context import DEFAULT_TIMEOUT_S, Context
from conformance.descriptor import DescriptorError
from conformance.expectations import ExpectationsError, load_expectations
from conformance.outcomes import CheckFailed
from conformance.profiles import certified_profiles
from conformance.registry import Check, exempt, selects
from conformance.report import ProfileRow, build_report, write_report
from conformance.results.artifacts import Artifacts, write_artifacts
from conformance.results.summary_text import summary_lines
from conformance.run.certify_plugins import refuse_foreign_plugins
from conformance.run.check_reports import AFTER_THE_LAST_TASK, check_id_of
from conformance.run.check_results import CheckResults
from conformance.run.run_options import OptionsError, RunOptions
from conformance.run.target_option import runner_of
from conformance.vendor.process import VendorProcess
from conformance.vendor.remote_descriptor import Prepared, describe, from_info
from conformance.version import SUITE_VERSION

RUN_KEY = pytest.StashKey["ConformanceRun"]()
#: The run's options, validated (``conformance.run.run_options``): their one owner, read by the run and its checks.
OPTIONS_KEY = pytest.StashKey[RunOptions]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("executorch-conformance")
    group.addoption("--et-backend", metavar="NAME|MODULE:ATTR", help="the backend descriptor to check")
    group.addoption(
        "--et-expectations", metavar="TOML", help="expected failures / not-applicable checks, with reasons"
    )
    group.addoption(
        "--et-certify", action="store_true", help="no expected failures; every mandatory check must pass"
    )
    group.addoption(
        "--et-previous-report",
        metavar="JSON",
        help="a report of this backend by an earlier suite release: a failure of a requirement changed since "
        "is a warning for the rest of the minor series that changed it (docs/api-stability.md)",
    )
    group.addoption(
        "--et-no-cache",
        action="store_true",
        help="lower everything again: neither read nor write the lowering cache (docs/contract.md)",
    )
    group.addoption("--et-report", metavar="JSON", help="where to write the JSON report")
    group.addoption(
        "--et-checks", metavar="IDS", help="comma-separated check IDs or areas (AOT, RT, ...) to run"
    )
    group.addoption(
        "--et-timeout",
        metavar="SECONDS",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"the longest a check may wait for the backend's code (default {DEFAULT_TIMEOUT_S:g})",
    )
    group.addoption(
        "--et-memory-limit",
        metavar="GB",
        type=float,
        default=None,
        help="the most memory the backend's code may allocate, in GiB (default: 3/4 of this machine's)",
    )
    group.addoption(
        "--et-command", help="the command line to record in the report (set by executorch-conformance)"
    )
    group.addoption(
        "--et-ops", metavar="OPS", help="comma-separated operator schema names: the OPS checks run only these"
    )
    group.addoption(
        "--et-models",
        metavar="NAMES",
        help="also run the model tier (report-only): 'all' or comma-separated names of conformance.models",
    )
    group.addoption(
        "--et-target",
        metavar="URL",
        help="run the runtime checks on a target through the C++ runner: local, ssh://[user@]host[:port], "
        "adb[://serial] (docs/device-runner.md)",
    )
    group.addoption(
        "--et-runner", metavar="PATH", help="the conformance runner built for the backend (with --et-target)"
    )
    group.addoption(
        "--et-vendor-python",
        metavar="PATH",
        help="the python of the vendor's environment, which every vendor process runs (docs/certification.md)",
    )


def pytest_configure(config: pytest.Config) -> None:
    from conformance.judge.environment import worker_python

    python = worker_python()
    if python and getattr(config.option, "tx", None):  # xdist's popen workers judge too: isolated as well
        config.option.tx = [
            f"{spec}//python={python}" if spec == "popen" else spec for spec in config.option.tx
        ]
    if config.getoption("et_backend"):
        try:
            config.stash[OPTIONS_KEY] = RunOptions.from_pytest(config)
            config.stash[OPTIONS_KEY].use_vendor_python()
        except OptionsError as exc:
            raise pytest.UsageError(str(exc)) from None
        run = ConformanceRun(config)
        config.stash[RUN_KEY] = run
        config.pluginmanager.register(run, "executorch-conformance-run")


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(RUN_KEY, None)
    if run is not None:
        run.close()
        del config.stash[RUN_KEY]
        del config.stash[OPTIONS_KEY]
        config.pluginmanager.unregister(run)
        from conformance.vendor import interpreter as vendor_interpreter

        vendor_interpreter.use(None)


@pytest.fixture(scope="session")
def et_context(request: pytest.FixtureRequest):
    """The Context of this run (one per pytest process, shared by all checks)."""
    run = request.config.stash.get(RUN_KEY, None)
    if run is None:
        pytest.skip("no backend given: pass --et-backend NAME or MODULE:ATTR")
    context = run.context()
    yield context
    # torn down after this process's last check: its teardown report is that check's (CRASHED, check_reports.outcome_of)
    try:
        context.vendor.check_alive()
    except CheckFailed as exc:
        pytest.fail(f"{AFTER_THE_LAST_TASK}: {exc}", pytrace=False)


class ConformanceRun:
    """State of one run, on the controller and on each xdist worker."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.options = options = config.stash[OPTIONS_KEY]
        self.checks = {c.id: c for c in all_checks()}
        self.spec = options.backend
        self.timeout = options.timeout
        if options.certify:
            refuse_foreign_plugins(config)
        self._vendor: VendorProcess | None = None
        #: a vendor process started for work ahead while the backend was described (``prepare``)
        self._warm: VendorProcess | None = None
        self._context: Context | None = None
        self._previous_sigterm = _stop_on_sigterm() if not hasattr(config, "workerinput") else None
        try:
            self.descriptor, self.descriptor_text = self._describe(config)
            self.expectations = load_expectations(options.expectations, list(self.checks))
            self.ops = options.operators(self.descriptor)
        except (DescriptorError, ExpectationsError, OptionsError) as exc:
            self.close()
            raise pytest.UsageError(str(exc)) from None
        self.certify = options.certify
        self.claim = None
        if options.previous_report and not hasattr(config, "workerinput"):
            from conformance.certification.carry_over import CarryOverError, HandedClaim, read_claim

            self.claim = HandedClaim.find(config.pluginmanager.get_plugins(), options.previous_report)
            if self.claim is None:  # plain pytest: nothing was handed, the plugin reads the report
                try:
                    self.claim = read_claim(
                        options.previous_report,
                        self.descriptor.backend_id,
                        self.certify,
                        SUITE_VERSION,
                        options.flag("previous_report"),
                    )
                except CarryOverError as exc:
                    self.close()
                    raise pytest.UsageError(str(exc)) from None
        if self.certify and self.expectations.expected_failures:
            raise pytest.UsageError(
                "--certify forbids expected failures, but the expectations file declares: "
                + ", ".join(f"{k} ({v})" for k, v in self.expectations.expected_failures.items())
            )
        self.selected = options.selected
        self.models = options.model_names
        try:
            self.runner = runner_of(config.pluginmanager.get_plugins(), options)
        except OptionsError as exc:
            self.close()
            raise pytest.UsageError(str(exc)) from None
        self.target_url = options.target
        self.expected_ids = [i for i in self.checks if self._wanted(i)]
        #: the checks this run will run that start work when it begins (``Check.ahead``)
        self.ahead: list[Check] = []
        #: what the tests reported (``conformance.run.check_results``)
        self.collected = CheckResults(self.checks, self.models)
        self.started = time.monotonic()
        self.interrupted = False
        self.report: dict[str, Any] | None = None
        #: the files written beside the report (conformance.results.artifacts), once it is written
        self.artifacts: Artifacts | None = None

    def _vendor_log(self) -> Path | None:
        """Where the vendor process of this pytest process writes what the vendor's code prints."""
        report = self.options.report
        if not report:
            return None
        worker = getattr(self.config, "workerinput", {}).get("workerid")
        log = Path(report).parent / f"vendor-process{'-' + worker if worker else ''}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.unlink(missing_ok=True)
        return log

    def _describe(self, config: pytest.Config):
        """(descriptor, its JSON text): from the controller (xdist worker), from the vendor process the CLI
        started, or read in a new vendor process kept for the checks. The descriptor's module is never
        imported here (``conformance.vendor.remote_descriptor``)."""
        given = getattr(config, "workerinput", {}).get("et_descriptor")
        if given is not None:
            return from_info(given), given
        for plugin in config.pluginmanager.get_plugins():  # what executorch-conformance run handed over
            prepared = plugin.take(self.spec) if isinstance(plugin, Prepared) else None
            if prepared is not None:
                descriptor, text, self._vendor = prepared
                self._warm = plugin.take_warm(self.spec)
                return descriptor, text
        self._vendor = VendorProcess(self.spec, None, self._vendor_log(), self.options.memory_bytes)
        return describe(self.spec, self._vendor, self.timeout)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        """xdist: each worker gets the descriptor's data; the checks run there, so this process needs no
        vendor process of its own."""
        node.workerinput["et_descriptor"] = self.descriptor_text
        if self._vendor is not None:
            self._vendor.close()
            self._vendor = None

    def context(self) -> Context:
        if self._context is None:
            vendor, self._vendor = self._vendor, None
            log = None if vendor is not None else self._vendor_log()
            self._context = Context(
                self.descriptor,
                self.spec,
                self.timeout,
                log,
                self.target_url,
                self.runner,
                vendor=vendor,
                memory_bytes=self.options.memory_bytes,
                lowering_cache=self.options.lowering_cache(),
            )
            self._context.operator_selection = self.ops
            if self._warm is not None:
                self._context.keep_warm(self._warm)
                self._warm = None
            if not hasattr(self.config, "workerinput"):  # an xdist worker does not know which checks it gets
                for check in self.ahead:
                    assert check.ahead is not None  # only such checks are in self.ahead
                    check.ahead(self._context)
        return self._context

    def close(self) -> None:
        if self._context is not None:
            self._context.close()
            self._context = None
        if self._vendor is not None:
            self._vendor.close()
            self._vendor = None
        if self._warm is not None:
            self._warm.close()
            self._warm = None
        if self._previous_sigterm is not None:
            signal.signal(signal.SIGTERM, self._previous_sigterm)
            self._previous_sigterm = None

    def _exempt(self, check) -> bool:
        """A conditional check whose capability the descriptor does not declare."""
        return exempt(check.applies_if, self.descriptor.capabilities())

    def _wanted(self, check_id: str) -> bool:
        return selects(self.selected, check_id)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            params = getattr(getattr(item, "callspec", None), "params", {})
            check = params.get("check")
            if "model" in params:  # the model tier runs only when --et-models selects the model
                (keep if self.models is not None and params["model"] in self.models else drop).append(item)
                continue
            if check is None:
                keep.append(item)
                continue
            if not self._wanted(check.id):
                drop.append(item)
                continue
            item.user_properties.extend(
                [
                    ("check_id", check.id),
                    ("clause", check.clause),
                    ("level", check.level),
                    ("title", check.title),
                    ("applies_if", check.applies_if or ""),
                ]
            )
            reason = self.expectations.expected_failure(check.id)
            if reason:
                item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
            reason = self.expectations.declared_not_applicable(check.id)
            if reason and not self._exempt(check):  # an exempt check says so itself (CAPABILITY_ABSENT)
                item.add_marker(pytest.mark.skip(reason=f"not applicable: {reason}"))
            elif check.ahead is not None and not self._exempt(check):
                self.ahead.append(check)
            keep.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
        # The checks whose work starts ahead run last, so that the others' time covers it (the report keeps
        # the checks' order).
        late = {c.id for c in self.ahead}
        items[:] = sorted(keep, key=lambda item: check_id_of(item.nodeid) in late)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.collected.record(report)

    def pytest_keyboard_interrupt(self, excinfo) -> None:
        self.interrupted = True

    @pytest.hookimpl(tryfirst=True)  # before junitxml writes junit.xml, which carries the profiles
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if hasattr(self.config, "workerinput"):
            self.close()
            return  # xdist worker: the controller writes the report
        if exitstatus == pytest.ExitCode.INTERRUPTED or session.shouldstop:
            self.interrupted = True
        self.close()
        collected = self.collected
        results = collected.complete(self.expected_ids, self.interrupted)
        if self.claim is not None:
            from conformance.certification.carry_over import carry

            results = carry(results, self.claim, SUITE_VERSION)
        report = build_report(
            descriptor=self.descriptor,
            results=results,
            certify=self.certify,
            interrupted=self.interrupted,
            selected=self.expected_ids,
            options=self.options.recorded(
                workers=_workers(self.config),
                carried=self.claim is not None,
                cached_lowerings=sum(collected.cached_lowerings.values()),
            ),
            command=self.options.command,
            duration_s=time.monotonic() - self.started,
            operators=list(collected.operators.values()) if collected.operators else None,
            target=collected.target if self.target_url else None,
            simulator=collected.simulator,
            models=collected.model_section(),
            previous_report=None if self.claim is None else self.claim.to_dict(),
        )
        path = self.options.report
        self.report = write_report(report, path) if path else report.to_dict()
        if path:  # the page, the badge and the per-case JUnit file, for plain pytest runs as for the CLI
            self.artifacts = write_artifacts(self.report, path)
        self._junit_profiles(report.profiles or [])
        if self.report["verdict"] == "not conformant" and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _junit_profiles(self, profiles: list[ProfileRow]) -> None:
        """Each profile's verdict as a property of junit.xml's testsuite (``profile:core`` =
        ``certified``), and ``certifies`` (``Core + Named data``), when --junitxml is given."""
        from _pytest.junitxml import xml_key

        xml = self.config.stash.get(xml_key, None)
        if xml is None:
            return
        for entry in profiles:
            xml.add_global_property(f"profile:{entry['id']}", entry["verdict"])
        xml.add_global_property("certifies", " + ".join(certified_profiles(profiles)))

    def pytest_terminal_summary(self, terminalreporter, exitstatus: int, config: pytest.Config) -> None:
        if (
            hasattr(config, "workerinput")
            or self.report is None
            or config.pluginmanager.has_plugin("et-console")
        ):
            return  # the CLI's console shows the table itself
        tr = terminalreporter
        tr.section(f"executorch conformance: {self.descriptor.backend_id} {self.descriptor.version}")
        for line in summary_lines(self.report, tr._tw.fullwidth):
            tr.write_line(line)
        path = self.options.report
        if path:
            tr.write_line(f"report: {Path(path).resolve()}")
        if self.artifacts is not None:
            made = self.artifacts
            if made.operators_junit is not None:
                tr.write_line(f"junit (one testcase per operator case): {made.operators_junit.resolve()}")
            if made.badge is not None:
                tr.write_line(f"badge: {made.badge[0].resolve()} and {made.badge[1].resolve()}")
            tr.write_line(f"page: {made.page.resolve()}")


def _stop_on_sigterm():
    """Makes SIGTERM (what ``kill``, ``timeout`` and CI runners send) end the run as Ctrl-C does: the
    report is written, says interrupted and not conformant, and no badge is made. Returns the previous
    handler (None outside the main thread, where no handler can be set)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"terminated by {signal.Signals(signum).name}")

    return signal.signal(signal.SIGTERM, interrupt)


def _workers(config: pytest.Config) -> int:
    n = getattr(config.option, "numprocesses", None)
    return int(n) if isinstance(n, int) and n > 0 else 1
