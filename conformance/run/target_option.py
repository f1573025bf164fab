"""``--target`` and ``--runner`` checked once for both entry points: the URL parses, the runner is given and
is a conformance runner, and (for the command line, before anything starts) the target answers.
Every message spells the options as the entry point that was used does (``RunOptions.flag``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.run.run_options import OptionsError, RunOptions

#: How long reaching the target once may take, in seconds.
REACH_S = 30


def checked_runner(options: RunOptions, reach: bool = False) -> str | None:
    """The runner's path when ``options.target`` is given, after checking it there (and, with ``reach``,
    that the target answers); None without a target. OptionsError (one line) for a bad URL, a missing or
    wrong runner, or an unreachable target."""
    if options.target is None:  # --runner without --target: RunOptions says so
        return None
    from conformance.targets import TargetError, open_transport
    from conformance.targets.runtime import check_runner

    try:
        transport = open_transport(options.target)
        try:
            if options.runner is None:
                raise TargetError(
                    f"{options.flag('target')} {options.target} needs {options.flag('runner')}: the conformance "
                    "runner built for the backend (docs/device-runner.md)"
                )
            runner = check_runner(options.runner, transport)
            if reach:
                done = transport.run("true", REACH_S, "checking that it answers")
                if done.status != 0:
                    from conformance.targets.transport import last_line

                    raise TargetError(
                        f"cannot reach {options.target}: {last_line(done.stderr + done.stdout)}; check the "
                        "address, that the target is up and that it lets you in without a password "
                        "(ssh keys, adb authorization)"
                    )
        finally:
            transport.close()
    except TargetError as exc:
        raise OptionsError(str(exc)) from None
    return str(runner)


@dataclass(frozen=True)
class CheckedRunner:
    """A runner ``executorch-conformance run`` has checked (and reached the target with) before anything
    started, handed to the pytest session it starts in the same process as a plugin object of
    ``pytest.main``, so that the plugin does not open the target again to check it a second time; the plugin
    checks the options itself when nothing was handed (a plain pytest run, an xdist worker)."""

    target: str
    runner: str

    @staticmethod
    def find(plugins: Any, options: RunOptions) -> str | None:
        """The runner handed for ``options``' target and runner among ``plugins``, or None."""
        return next(
            (
                p.runner
                for p in plugins
                if isinstance(p, CheckedRunner) and (p.target, p.runner) == (options.target, options.runner)
            ),
            None,
        )


def runner_of(plugins: Any, options: RunOptions) -> str | None:
    """The runner of a run with ``options``: the one handed among ``plugins`` if the command line checked it,
    else ``checked_runner(options)``; OptionsError as there."""
    return CheckedRunner.find(plugins, options) or checked_runner(options)
