"""The bottom of the suite: levels, the outcomes a check can have, and the two
exceptions a check raises. Imports nothing of the suite, so every other module
may import it.

Outcomes (the ``outcome`` field of each result in report.json):

passed             the check ran and the backend meets the clause
failed             the check ran and the backend does not meet the clause
error              the check could not be run (an error in the suite or its setup)
crashed            the vendor's code killed the process that ran it (a signal or an exit)
timed_out          the vendor's code did not finish within the per-check timeout
not_run            the check was selected but never reported (interrupted run, lost worker)
not_applicable     the check does not apply (declared, or the capability is absent)
expected_failure   failed, as the expectations file declares (never in certify mode)
unexpected_pass    passed although the expectations file says it fails
"""

from __future__ import annotations

MUST = "MUST"
SHOULD = "SHOULD"
LEVELS = (MUST, SHOULD)

PASSED = "passed"
FAILED = "failed"
ERROR = "error"
CRASHED = "crashed"
TIMED_OUT = "timed_out"
NOT_RUN = "not_run"
NOT_APPLICABLE = "not_applicable"
EXPECTED_FAILURE = "expected_failure"
UNEXPECTED_PASS = "unexpected_pass"  # noqa: S105  an outcome, not a password

OUTCOMES = (
    PASSED,
    FAILED,
    ERROR,
    CRASHED,
    TIMED_OUT,
    NOT_RUN,
    NOT_APPLICABLE,
    EXPECTED_FAILURE,
    UNEXPECTED_PASS,
)
#: Outcomes that make a MUST check fail the verdict in either mode.
BAD = (FAILED, ERROR, CRASHED, TIMED_OUT, NOT_RUN, UNEXPECTED_PASS)

#: Short labels for the terminal table and the badge.
LABELS = {
    PASSED: "PASS",
    FAILED: "FAIL",
    ERROR: "ERROR",
    CRASHED: "CRASH",
    TIMED_OUT: "TIMEOUT",
    NOT_RUN: "NOT RUN",
    NOT_APPLICABLE: "N/A",
    EXPECTED_FAILURE: "XFAIL",
    UNEXPECTED_PASS: "XPASS",
}


def __getattr__(name: str):
    """``CAPABILITY_ABSENT`` moved to ``conformance.descriptor`` (0.5.0), where it is derived from the
    descriptor's capability fields: the old name still works, with a SuiteDeprecationWarning. Resolved
    when the name is used, never when this module is imported, so that outcomes stays the bottom of
    the import graph (tests/layering)."""
    if name != "CAPABILITY_ABSENT":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    import warnings

    deprecations = importlib.import_module("conformance.deprecations")
    message = deprecations.notice("outcomes-capability-absent", "conformance.outcomes.CAPABILITY_ABSENT")
    if deprecations.is_error("outcomes-capability-absent"):
        raise AttributeError(message)
    warnings.warn(message, deprecations.SuiteDeprecationWarning, stacklevel=2)
    return importlib.import_module("conformance.descriptor").CAPABILITY_ABSENT


class CheckFailed(AssertionError):
    """The backend does not meet the clause; the message names the defect."""


class NotApplicable(Exception):
    """The check does not apply to this backend; the message says why."""


class VendorCrashed(CheckFailed):
    """The vendor's code killed the process that ran it; the message says where and how."""

    outcome = CRASHED


class VendorTimedOut(CheckFailed):
    """The vendor's code did not return in time; the message says where and after how long."""

    outcome = TIMED_OUT


class TargetUnavailable(CheckFailed):
    """The target could not run the check (lost connection, full disk, the runner did not start): the
    message names the target and what failed."""

    outcome = ERROR


class SuiteCannotRun(CheckFailed):
    """A tool the suite needs on this machine to run the check is missing or failed (a compiler, cmake):
    the message names it and what to install; the backend is not judged."""

    outcome = ERROR


def ensure(condition: bool, message: str) -> None:
    """Raises CheckFailed(message) unless ``condition``."""
    if not condition:
        raise CheckFailed(message)
