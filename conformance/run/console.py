"""What ``executorch-conformance run`` shows on the terminal: one progress line
per check as it finishes (rewritten in place on a terminal), then the results
table and the verdict. Everything else the run prints (pytest's own output,
warnings, what the vendor's and third-party code print) goes to the run's log
file; ``run -v`` shows it instead.

A pytest plugin object owning its output stream (the model is pytest's
junitxml reporter): the CLI registers it, the conformance plugin's state is
read from ``config.stash``.
"""

from __future__ import annotations

from typing import TextIO

import pytest

from conformance.outcomes import LABELS
from conformance.results.result_tables import own_s, shared_s


class Console:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.done: set[str] = set()

    def _run(self, config: pytest.Config):
        from conformance.plugin import RUN_KEY

        return config.stash.get(RUN_KEY, None)

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def pytest_configure(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A line for each check whose result has just arrived (the conformance plugin records it first)."""
        run = self._run(self.config)
        if run is None or hasattr(self.config, "workerinput"):
            return
        total = len(run.expected_ids)
        for check_id in run.expected_ids:
            if check_id in run.collected.results and check_id not in self.done:
                self.done.add(check_id)
                result = run.collected.results[check_id]
                shared = shared_s(result)
                line = (
                    f"[{len(self.done):>{len(str(total))}}/{total}] {check_id:<8} "
                    f"{LABELS[result['outcome']]:<7} {own_s(result) or 0.0:6.1f} s"
                    + (f" (+{shared:.1f} s shared setup)" if shared >= 0.05 else "")
                )
                self._write(f"\r{line:<60}" if self.live else line + "\n")
        for name in run.models or ():
            row = run.collected.model_rows.get(name)
            if row is not None and f"model {name}" not in self.done:
                self.done.add(f"model {name}")
                share = (
                    "" if row["delegated_fraction"] is None else f" {row['delegated_fraction']:.0%} delegated"
                )
                line = f"[model] {name:<14} {row['result']}{share} {row['duration_s'] or 0.0:6.1f} s"
                self._write(f"\r{line:<60}" if self.live else line + "\n")

    def summary(self, report: dict, report_path) -> None:
        """The tables and the verdict of a finished run (``summary_text``)."""
        import shutil

        from conformance.results.summary_text import summary_lines

        if self.live and self.done:
            self._write("\n")
        self._write(f"\nexecutorch conformance: {report['backend']['id']} {report['backend']['version']}\n")
        width = shutil.get_terminal_size((120, 24)).columns if self.live else 120
        for line in summary_lines(report, width):
            self._write(line + "\n")
        self._write(f"report: {report_path}\n")


class NamedPlugin:
    """Registers a plugin object under a name (``pytest.main(plugins=...)`` takes objects only). It lives
    here, not in the CLI's module, which is ``__main__`` under ``python -m``: a certify run accepts only
    plugins of the suite's own modules (``certify_plugins.foreign_plugins``)."""

    def __init__(self, plugin, name: str) -> None:
        self.plugin, self.name = plugin, name

    def pytest_configure(self, config) -> None:
        config.pluginmanager.register(self.plugin, self.name)
        self.plugin.pytest_configure(config)
