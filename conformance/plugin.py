"""The pytest plugin: options, the shared context, expectations, the results
table and the JSON report. Inactive unless ``--et-backend`` is given.

The run's state is one ``ConformanceRun`` kept in ``config.stash`` (on the
controller and on every xdist worker). The report always holds every selected
check: one that never reported (interrupted run, lost worker) is ``not_run``,
and the verdict is computed over that full list.
"""

from __future__ import annotations

import signal
import time
import types
from pathlib import Path
from typing import Any

import pytest

from conformance.checks import all_checks
from conformance.context import DEFAULT_TIMEOUT_S, Context
from conformance.descriptor import DescriptorError
from conformance.expectations import ExpectationsError, load_expectations
from conformance.outcomes import (
    CRASHED,
    ERROR,
    EXPECTED_FAILURE,
    FAILED,
    NOT_APPLICABLE,
    NOT_RUN,
    OUTCOMES,
    PASSED,
    UNEXPECTED_PASS,
    CheckFailed,
)
from conformance.profiles import certified_profiles
from conformance.registry import Check, exempt, selects
from conformance.report import build_report, write_report
from conformance.results.artifacts import Artifacts, write_artifacts
from conformance.results.summary_text import summary_lines
from conformance.run.run_options import OptionsError, RunOptions
from conformance.vendor import step_times
from conformance.vendor.remote_descriptor import Prepared, describe, from_info
from conformance.vendor.vendor_process import VendorProcess
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
    from conformance.judge.judge_environment import worker_python

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
        from conformance.vendor import vendor_interpreter

        vendor_interpreter.use(None)


@pytest.fixture(scope="session")
def et_context(request: pytest.FixtureRequest):
    """The Context of this run (one per pytest process, shared by all checks)."""
    run = request.config.stash.get(RUN_KEY, None)
    if run is None:
        pytest.skip("no backend given: pass --et-backend NAME or MODULE:ATTR")
    context = run.context()
    yield context
    # torn down after this process's last check: its teardown report is that check's (CRASHED, _status)
    try:
        context.vendor.check_alive()
    except CheckFailed as exc:
        pytest.fail(f"{AFTER_THE_LAST_TASK}: {exc}", pytrace=False)


#: How the last liveness check's failure begins (``et_context``): the result of the check that ran last.
AFTER_THE_LAST_TASK = "the vendor process did not stay alive after the run's last task"


def _status(report: pytest.TestReport) -> tuple[str, str] | None:
    """(outcome, reason) of a check's report, or None for phases that add nothing."""
    props = dict(report.user_properties)
    reason = _reason(report)
    if hasattr(report, "wasxfail"):
        if report.skipped:
            return EXPECTED_FAILURE, report.wasxfail
        return UNEXPECTED_PASS, f"expected to fail ({report.wasxfail}) but passed"
    if report.skipped:  # declared (setup) or raised by the check (call)
        return NOT_APPLICABLE, reason.removeprefix("Skipped: ").removeprefix("not applicable: ")
    if "crashed while running" in reason:  # an xdist worker died (the vendor process should have)
        return CRASHED, reason
    if report.when == "teardown" and report.failed and reason.startswith(AFTER_THE_LAST_TASK):
        return CRASHED, reason
    if report.when == "call":
        if report.passed:
            return PASSED, str(props.get("note", ""))
        if "[XPASS(strict)]" in reason:
            return UNEXPECTED_PASS, reason
        return str(props.get("outcome", FAILED)), reason
    if report.failed:
        return ERROR, reason
    return None


def _reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple):  # skips: (path, line, message)
        return str(longrepr[2])
    crash = getattr(longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(longrepr)
    return text.removeprefix("Failed: ")


class ConformanceRun:
    """State of one run, on the controller and on each xdist worker."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.options = options = config.stash[OPTIONS_KEY]
        self.checks = {c.id: c for c in all_checks()}
        self.spec = options.backend
        self.timeout = options.timeout
        foreign = foreign_plugins(config) if options.certify and not hasattr(config, "workerinput") else []
        if foreign:
            raise pytest.UsageError(
                "--et-certify: pytest loaded plugins that are not the suite's own, and their code runs in the "
                f"process that judges: {', '.join(foreign)}. Certify with 'executorch-conformance run --certify' "
                "(it loads only the suite's plugins), or set PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 and pass "
                "-p conformance.plugin --noconftest"
            )
        self._vendor: VendorProcess | None = None
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
        self.operators: dict[tuple[str, str], dict[str, Any]] = {}
        self.models = options.model_names
        #: model name -> its row of the report's models section, as the model tests report them
        self.model_rows: dict[str, dict[str, Any]] = {}
        self.target_url, self.runner = _target_options(options)
        self.target: dict[str, Any] | None = None
        #: the vendor's simulator that computed the backend's delegates (docs/contract.md, "Simulated runtimes")
        self.simulator: dict[str, Any] | None = None
        self.expected_ids = [i for i in self.checks if self._wanted(i)]
        #: the checks this run will run that start work when it begins (``Check.ahead``)
        self.ahead: list[Check] = []
        self.results: dict[str, dict[str, Any]] = {}
        #: test node id -> the lowerings its check took from the lowering cache (from any xdist worker)
        self.cached_lowerings: dict[str, int] = {}
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
        items[:] = sorted(keep, key=lambda item: _check_id_of(item.nodeid) in late)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        hits = sum(int(str(v)) for k, v in report.user_properties if k == "cached_lowerings")
        if hits:  # each phase's report carries the item's properties so far: the last one counts
            self.cached_lowerings[report.nodeid] = hits
        if "test_model[" in report.nodeid:
            self._collect_model(report)
            return
        check_id = dict(report.user_properties).get("check_id") or _check_id_of(report.nodeid)
        if check_id not in self.checks:
            return
        status = _status(report)
        if status is None:
            return
        outcome, reason = status
        self._collect_operators(report)
        previous = self.results.get(check_id)
        if previous and previous["outcome"] != PASSED and outcome == PASSED:
            return  # a teardown pass does not undo a failed call
        seconds = _summed_seconds(report.user_properties)
        shared = seconds.pop("shared_s", 0.0)
        simulated = any(k == "simulated" for k, _ in report.user_properties) or bool(
            previous and previous.get("simulated")
        )
        self.results[check_id] = {
            **self._result(check_id, outcome, reason, report.duration, shared),
            **{k: round(v, 3) for k, v in seconds.items()},
            **({"simulated": True} if simulated else {}),
        }

    def _result(
        self, check_id: str, outcome: str, reason: str, duration: float, shared: float = 0.0
    ) -> dict[str, Any]:
        assert outcome in OUTCOMES, outcome
        c = self.checks[check_id]
        return {
            "id": c.id,
            "clause": c.clause,
            "level": c.level,
            "title": c.title,
            "applies_if": c.applies_if,
            "outcome": outcome,
            "reason": reason,
            "duration_s": round(duration, 3),
            # of duration_s, the shared setup (lowerings, samples, runtime loads) later checks reuse
            "shared_s": round(min(shared, duration), 3),
        }

    def _collect_model(self, report: pytest.TestReport) -> None:
        """The row a model test recorded; a model test that failed without one (a defect of the suite) is an
        ``error`` row with pytest's reason."""
        import json

        name = _check_id_of(report.nodeid) or ""
        recorded = dict(report.user_properties).get("model")
        if recorded is not None:
            self.model_rows[name] = json.loads(str(recorded))
        elif report.failed and name in (self.models or ()) and name not in self.model_rows:
            from conformance.models.architectures import MODELS
            from conformance.models.runner import ERROR, new_row

            self.model_rows[name] = {**new_row(MODELS[name]), "result": ERROR, "reason": _reason(report)}

    def model_section(self) -> list[dict[str, Any]] | None:
        """The rows of the selected models in the tier's order (None without --et-models)."""
        if self.models is None:
            return None
        return [self.model_rows[m] for m in self.models if m in self.model_rows]

    def _collect_operators(self, report: pytest.TestReport) -> None:
        """Merges the per-operator rows an OPS check recorded (the one that ran more cases wins)."""
        import json

        for key, value in report.user_properties:
            if key == "target" and self.target is None:
                self.target = json.loads(str(value))
            if key == "simulator" and self.simulator is None:
                self.simulator = json.loads(str(value))
            if key != "operators":
                continue
            for row in json.loads(str(value)):  # recorded with json.dumps
                old = self.operators.get((row["op"], row["dtype"]))
                if old is None or row["ran"] >= old["ran"]:
                    self.operators[(row["op"], row["dtype"])] = {**(old or {}), **row}

    def pytest_keyboard_interrupt(self, excinfo) -> None:
        self.interrupted = True

    def complete_results(self) -> list[dict[str, Any]]:
        """A result for every selected check, in the suite's order; the missing ones are not_run."""
        why = (
            "the run was interrupted before this check reported"
            if self.interrupted
            else "no result was reported for this check (its test process was lost)"
        )
        return [self.results.get(i) or self._result(i, NOT_RUN, why, 0.0) for i in self.expected_ids]

    @pytest.hookimpl(tryfirst=True)  # before junitxml writes junit.xml, which carries the profiles
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if hasattr(self.config, "workerinput"):
            self.close()
            return  # xdist worker: the controller writes the report
        if exitstatus == pytest.ExitCode.INTERRUPTED or session.shouldstop:
            self.interrupted = True
        self.close()
        results = self.complete_results()
        if self.claim is not None:
            from conformance.certification.carry_over import carry

            results = carry(results, self.claim, SUITE_VERSION)
        report = build_report(
            descriptor=self.descriptor,
            results=results,
            certify=self.certify,
            interrupted=self.interrupted,
            selected=self.expected_ids,
            options={
                "backend": self.spec,
                "expectations": self.options.expectations,
                "certify": self.certify,
                "checks": self.options.checks,
                "timeout": self.timeout,
                "workers": _workers(self.config),
                **({"target": self.target_url} if self.target_url else {}),
                **({"models": self.options.models} if self.models is not None else {}),
                **({"previous_report": self.options.previous_report} if self.claim is not None else {}),
                "lowering_cache": _cache_mode(self.options),
                "cached_lowerings": sum(self.cached_lowerings.values()),
            },
            command=self.options.command,
            duration_s=time.monotonic() - self.started,
            operators=list(self.operators.values()) if self.operators else None,
            target=self.target if self.target_url else None,
            simulator=self.simulator,
            models=self.model_section(),
            previous_report=None if self.claim is None else self.claim.to_dict(),
        )
        path = self.options.report
        self.report = write_report(report, path) if path else report.to_dict()
        if path:  # the page, the badge and the per-case JUnit file, for plain pytest runs as for the CLI
            self.artifacts = write_artifacts(self.report, path)
        self._junit_profiles(report.profiles or [])
        if self.report["verdict"] == "not conformant" and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _junit_profiles(self, profiles: list[dict[str, Any]]) -> None:
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


#: Where the plugins a certify run may load come from: pytest itself, the suite, pytest-xdist.
OWN_PLUGIN_MODULES = ("_pytest.", "conformance.", "xdist.", "__channelexec__")


def foreign_plugins(config: pytest.Config) -> list[str]:
    """The plugins pytest loaded that are neither pytest's own nor the suite's (an installed package's
    ``pytest11`` entry point, a ``conftest.py``, ``-p something``), each as 'module (distribution version)'
    where an installed distribution provides it."""
    dists = {
        id(plugin): f"{dist.metadata['Name']} {dist.version}"
        for plugin, dist in config.pluginmanager.list_plugin_distinfo()
    }
    found = []
    for _name, plugin in config.pluginmanager.list_name_plugin():
        if plugin is None:  # blocked with -p no:NAME
            continue
        module = plugin.__name__ if isinstance(plugin, types.ModuleType) else type(plugin).__module__
        if not f"{module}.".startswith(OWN_PLUGIN_MODULES):
            found.append(f"{module} ({dists[id(plugin)]})" if id(plugin) in dists else module)
    return sorted(set(found))


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


def _cache_mode(options: RunOptions) -> str:
    """How the run used the lowering cache: 'on' (read and write), 'write-only' (certify), 'off' (--no-cache)."""
    if options.no_cache:
        return "off"
    return "write-only" if options.certify else "on"


def _target_options(options: RunOptions) -> tuple[str | None, str | None]:
    """(--et-target, --et-runner), checked: a usage error names a bad URL or a missing runner."""
    url, runner = options.target, options.runner
    if url is None:
        return None, None
    from conformance.targets import TargetError, open_transport
    from conformance.targets.runtime import check_runner

    try:
        transport = open_transport(url)
        try:
            if runner is None:
                raise TargetError(
                    f"--et-target {url} needs --et-runner: the conformance runner built for the backend "
                    "(docs/device-runner.md)"
                )
            return url, str(check_runner(runner, transport))
        finally:
            transport.close()
    except TargetError as exc:
        raise pytest.UsageError(str(exc)) from None


#: The per-check seconds the run records as user properties (``Context.record``): the shared setup, and
#: where the vendor process's time went (``conformance.vendor.step_times``).
SECONDS_PROPERTIES = ("shared_s", *(f"{kind}_s" for kind in step_times.KINDS))


def _summed_seconds(properties: list[tuple[str, object]]) -> dict[str, float]:
    """Each of ``SECONDS_PROPERTIES`` summed over a test report's properties (0.0 when absent)."""
    return {key: sum(float(str(v)) for k, v in properties if k == key) for key in SECONDS_PROPERTIES}


def _check_id_of(nodeid: str) -> str | None:
    """'...test_check[RT-3]' -> 'RT-3' (reports of crashed xdist workers carry no user properties)."""
    if nodeid.endswith("]") and "[" in nodeid:
        return nodeid[nodeid.rindex("[") + 1 : -1]
    return None


def _workers(config: pytest.Config) -> int:
    n = getattr(config.option, "numprocesses", None)
    return int(n) if isinstance(n, int) and n > 0 else 1
