"""The one command line of ``executorch-conformance run`` started in a process of its own.

Every place that starts the suite as a child process (``conformance.testing``, ``verify --rerun``, the
scoreboard, the matrix, the benchmarks) builds it here, so that an option is spelled, ordered and
defaulted once. ``Options`` holds the options those callers set (the CLI's options of the same names;
``conformance.run.run_options.RunOptions`` validates the whole set when the command runs);
``run_command`` gives the argv in this Python (``python -m conformance.cli run ...``) and ``shown`` the
same as a person would type it (``executorch-conformance run ...``).
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

#: How this Python starts the suite's CLI: ``python`` followed by these.
CLI = ("-m", "conformance.cli")
#: The installed command those stand for.
COMMAND = "executorch-conformance"


@dataclasses.dataclass(frozen=True)
class Options:
    """How the suite is run (the CLI's options of the same names)."""

    checks: str | None = None
    certify: bool = False
    expectations: str | None = None
    timeout: float | None = None
    workers: int = 1
    #: ``--ops``: the operators the OPS checks run (None: every declared one)
    ops: str | None = None
    #: ``--models``: the model tier's architectures ('all', or names; None: no model tier)
    models: str | None = None

    def argv(self) -> list[str]:
        out = ["-n", str(self.workers)]
        if self.checks:
            out += ["--checks", self.checks]
        if self.certify:
            out.append("--certify")
        if self.expectations:
            out += ["--expectations", str(self.expectations)]
        if self.timeout is not None:
            out += ["--timeout", f"{self.timeout:g}"]
        if self.ops:
            out += ["--ops", self.ops]
        if self.models:
            out += ["--models", self.models]
        return out


def run_command(spec: str, options: Options, report_dir: str | Path, python: str | None = None) -> list[str]:
    """The argv of ``executorch-conformance run`` for the backend ``spec`` with ``options``, writing into
    ``report_dir``, started with ``python`` (default: this interpreter)."""
    return [python or sys.executable, *CLI, "run", "--backend", spec, "--report-dir", str(report_dir)] + (
        options.argv()
    )


def shown(command: Sequence[str]) -> str:
    """``command`` (a ``run_command`` argv) as a person types it: ``executorch-conformance run ...``."""
    words = list(command)
    if words[1 : 1 + len(CLI)] == list(CLI):
        words = [COMMAND, *words[1 + len(CLI) :]]
    return shlex.join(words)
