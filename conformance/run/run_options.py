"""The options of one suite run, validated in one place for both entry points.

``RunOptions`` is what the pytest plugin runs with (kept in ``config.stash``);
``executorch-conformance run`` builds the same object from its own arguments
before it starts anything (so a bad option costs no vendor process) and then
only translates it into the plugin's options (``pytest_args``). Each message
names the option as the entry point that was used spells it (``--timeout`` on
the command line, ``--et-timeout`` under pytest), so nothing is rewritten.

What needs the backend's descriptor (the operators of ``--ops``) is validated
by ``operators`` once the descriptor is known; what needs the outside world
(an expectations file, a target) by its own module.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from conformance.context import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S

Entry = Literal["cli", "pytest"]

#: option -> (its flag on the command line, its flag under pytest)
FLAGS: dict[str, tuple[str, str]] = {
    "backend": ("--backend", "--et-backend"),
    "expectations": ("--expectations", "--et-expectations"),
    "certify": ("--certify", "--et-certify"),
    "no_cache": ("--no-cache", "--et-no-cache"),
    "checks": ("--checks", "--et-checks"),
    "ops": ("--ops", "--et-ops"),
    "models": ("--models", "--et-models"),
    "timeout": ("--timeout", "--et-timeout"),
    "memory_limit": ("--memory-limit", "--et-memory-limit"),
    "target": ("--target", "--et-target"),
    "runner": ("--runner", "--et-runner"),
    "report": ("--report-dir", "--et-report"),
    "command": ("", "--et-command"),
    "previous_report": ("--previous-report", "--et-previous-report"),
    "vendor_python": ("--vendor-python", "--et-vendor-python"),
}
#: The largest memory limit accepted, in GiB (a mebi-GiB: beyond any machine, and within RLIMIT_DATA).
MAX_MEMORY_GB = float(1 << 20)


class OptionsError(ValueError):
    """An option of the run is wrong; the message names it as the entry point spells it, and says how."""


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """The run's options (``None``: not given); construction validates them (OptionsError)."""

    backend: str
    timeout: float = DEFAULT_TIMEOUT_S
    memory_limit: float | None = None  # GiB
    certify: bool = False
    checks: str | None = None
    ops: str | None = None
    models: str | None = None
    expectations: str | None = None
    target: str | None = None
    runner: str | None = None
    report: str | None = None
    command: str | None = None
    #: lower everything, neither reading nor writing the lowering cache (conformance.vendor.lowering_cache)
    no_cache: bool = False
    #: the report of an earlier release whose claim carries over changed requirements
    #: (conformance/certification/carry_over.py)
    previous_report: str | None = None
    #: the python of the vendor's environment, which every vendor process runs
    #: (conformance/vendor/interpreter.py); None: the suite's own
    vendor_python: str | None = None
    #: which entry point's spelling the messages use
    entry: Entry = "pytest"
    #: the check IDs and areas ``checks`` selects (None: all); derived
    selected: frozenset[str] | None = dataclasses.field(init=False, default=None)
    #: the models ``models`` selects (None: the model tier does not run); derived
    model_names: tuple[str, ...] | None = dataclasses.field(init=False, default=None)

    def __post_init__(self) -> None:
        timeout = float(self.timeout)
        if not (timeout > 0 and timeout <= MAX_TIMEOUT_S):
            raise OptionsError(
                f"{self.flag('timeout')} must be a positive number of seconds, at most {MAX_TIMEOUT_S:g} (a day), "
                f"not {timeout:g}"
            )
        object.__setattr__(self, "timeout", timeout)
        if self.memory_limit is not None and not (0 < self.memory_limit < MAX_MEMORY_GB):
            raise OptionsError(
                f"{self.flag('memory_limit')} must be a positive number of GiB, not {self.memory_limit:g}"
            )
        if self.checks is not None and self.certify:
            raise OptionsError(
                f"{self.flag('certify')} runs every check; it cannot be combined with {self.flag('checks')}"
            )
        object.__setattr__(self, "selected", parse_selection(self.checks, self.flag("checks")))
        if self.ops is not None and self.certify:
            raise OptionsError(
                f"{self.flag('certify')} runs every operator; it cannot be combined with {self.flag('ops')}"
            )
        object.__setattr__(self, "model_names", _parse_models(self.models, self.flag("models")))
        if self.report is not None and self.entry == "pytest":  # the CLI names it report.json itself
            from conformance.results.artifacts import reserved_name_problem

            problem = reserved_name_problem(self.report, self.flag("report"))
            if problem:
                raise OptionsError(problem)
        if self.runner is not None and self.target is None:
            raise OptionsError(
                f"{self.flag('runner')} is given without {self.flag('target')}: say where the runner runs"
                + (" (--target local, ...)" if self.entry == "cli" else "")
            )

    def flag(self, option: str) -> str:
        """``option``'s flag as this run's entry point spells it."""
        cli, pytest = FLAGS[option]
        return cli if self.entry == "cli" else pytest

    @property
    def memory_bytes(self) -> int | None:
        """The memory limit in bytes, None for the default (``process.default_memory_limit``)."""
        return None if self.memory_limit is None else int(self.memory_limit * (1 << 30))

    def lowering_cache(self) -> Any:
        """The run's lowering cache (``conformance.vendor.lowering_cache``): None with ``no_cache``; write-only
        in a certify run, which never reuses a lowering it did not make itself."""
        if self.no_cache:
            return None
        from conformance.vendor.lowering_cache import LoweringCache

        return LoweringCache(read=not self.certify)

    def use_vendor_python(self) -> None:
        """Makes the vendor processes started from now on run ``vendor_python`` (checked first; OptionsError
        naming the option and what is wrong with the interpreter), or the suite's own interpreter. An
        interpreter already in use for the same path is not probed again."""
        from conformance.vendor import interpreter as vendor_interpreter

        if self.vendor_python is None:
            vendor_interpreter.use(None)
            return
        in_use = vendor_interpreter.current()
        if in_use is not None and in_use.path == self.vendor_python:
            return
        from conformance.judge.environment import vendor_state

        state = vendor_state()  # in the judge: the vendor's variables, which the judge's own lack
        try:
            vendor_interpreter.use(
                vendor_interpreter.probe(self.vendor_python, environ=state["environ"] if state else None)
            )
        except vendor_interpreter.VendorPythonError as exc:
            raise OptionsError(f"{self.flag('vendor_python')}: {exc}") from None

    def operators(self, descriptor: Any) -> frozenset[str] | None:
        """The operators ``ops`` selects, None for all; OptionsError naming any ``descriptor`` does not
        declare."""
        if self.ops is None:
            return None
        from conformance.operators.corpus import normalize

        wanted = {normalize(s.strip()) for s in self.ops.split(",") if s.strip()}
        unknown = sorted(wanted - set(descriptor.operators))
        if unknown or not wanted:
            raise OptionsError(
                f"{self.flag('ops')} {self.ops!r} selects {'undeclared ' + ', '.join(unknown) if unknown else 'nothing'}; "
                f"the backend declares: {', '.join(sorted(descriptor.operators))}"
            )
        return frozenset(wanted)

    def pytest_args(self) -> list[str]:
        """These options as the plugin's command-line options (what ``executorch-conformance run`` passes)."""
        args = ["--et-backend", self.backend, "--et-timeout", repr(self.timeout)]
        for option in (
            "report",
            "command",
            "expectations",
            "checks",
            "ops",
            "models",
            "target",
            "runner",
            "previous_report",
            "vendor_python",
        ):
            value = getattr(self, option)
            if value is not None:
                args += [FLAGS[option][1], value]
        if self.certify:
            args.append("--et-certify")
        if self.no_cache:
            args.append("--et-no-cache")
        if self.memory_limit is not None:
            args += ["--et-memory-limit", repr(self.memory_limit)]
        return args

    @property
    def cache_mode(self) -> str:
        """How the run uses the lowering cache: 'on' (read and write), 'write-only' (certify), 'off'
        (``no_cache``)."""
        if self.no_cache:
            return "off"
        return "write-only" if self.certify else "on"

    def recorded(self, workers: int, carried: bool, cached_lowerings: int) -> dict[str, Any]:
        """These options as the report records them (its ``options`` section, ``conformance.report.Options``;
        ``verify --rerun`` runs them again): with the run's ``workers``, whether a previous claim was
        ``carried`` over, and how many lowerings came from the cache."""
        return {
            "backend": self.backend,
            "expectations": self.expectations,
            "certify": self.certify,
            "checks": self.checks,
            "timeout": self.timeout,
            "workers": workers,
            **({"target": self.target} if self.target else {}),
            **({"models": self.models} if self.model_names is not None else {}),
            **({"previous_report": self.previous_report} if carried else {}),
            "lowering_cache": self.cache_mode,
            "cached_lowerings": cached_lowerings,
        }

    @classmethod
    def from_pytest(cls, config: Any) -> RunOptions:
        """The options pytest parsed (``config.getoption``), validated; OptionsError if one is wrong."""
        given = {name: config.getoption(f"et_{name}") for name in FLAGS}
        return cls(
            **{**given, "certify": bool(given["certify"]), "no_cache": bool(given["no_cache"])},
            entry="pytest",
        )


def parse_selection(text: str | None, flag: str = "--et-checks") -> frozenset[str] | None:
    """The check IDs and areas ``text`` selects (in any case), None for all; OptionsError naming any that
    is unknown (``flag``: how the caller spells the option)."""
    if text is None:
        return None
    from conformance.checks import all_checks
    from conformance.registry import AREAS

    wanted = {s.strip().upper() for s in text.split(",") if s.strip()}  # 'rt-3' is RT-3
    ids = {c.id for c in all_checks()}
    unknown = sorted(w for w in wanted if w not in ids and w not in AREAS)
    if unknown or not wanted:
        raise OptionsError(
            f"{flag} {text!r} selects {'unknown ' + ', '.join(unknown) if unknown else 'nothing'}; "
            f"give check IDs ({', '.join(sorted(ids))}) or areas ({', '.join(AREAS)})"
        )
    return frozenset(wanted)


def _parse_models(text: str | None, flag: str) -> tuple[str, ...] | None:
    from conformance.models.runner import parse_models

    try:
        return parse_models(text, flag)
    except ValueError as exc:
        raise OptionsError(str(exc)) from None
