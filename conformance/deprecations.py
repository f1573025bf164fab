"""What the suite's vendor API deprecates, since when, and what replaces it (docs/api-stability.md).

A vendor's code that uses a deprecated form keeps working, with a ``SuiteDeprecationWarning`` naming
the replacement, for at least one minor release: from ``since`` until ``error_in`` (a later minor or
major version), when the same use becomes an error naming the replacement. The report of a run lists
the deprecation warnings it met (``deprecations``). ``api`` names the members of the API snapshot
(``abi_checks/suite_api/``) the deprecation lets ``error_in`` remove; the snapshot diff
(``python -m abi_checks.tools.suite_api check``) refuses any other removal.

Add a deprecation here, use ``notice(key, detail)`` where the old form is met, and list it in
docs/api-stability.md (tests/api holds the docs to this table).
"""

from __future__ import annotations

import dataclasses

from conformance import version


class SuiteDeprecationWarning(DeprecationWarning):
    """A form of the suite's vendor API that still works but is deprecated; the message names the
    replacement and the suite version from which the form is an error."""


@dataclasses.dataclass(frozen=True)
class Deprecation:
    key: str
    #: what is deprecated, in words
    what: str
    #: the suite version whose release deprecated it (it warns from then on)
    since: str
    #: the first suite version in which it is an error (a later minor or major version)
    error_in: str
    #: what to write instead
    replacement: str
    #: API snapshot members ('module:Name.member') that ``error_in`` may remove
    api: tuple[str, ...] = ()


DEPRECATIONS: dict[str, Deprecation] = {
    d.key: d
    for d in (
        Deprecation(
            key="supported_ops-non-schema",
            what="a name in BackendDescriptor.supported_ops that is not an operator schema name",
            since="0.5.0",
            error_in="0.7.0",
            replacement=(
                "remove it from supported_ops: AOT-4 ignores tagged nodes that are not operators "
                "(operator.getitem) by itself, and supported_ops lists operator schema names "
                "('aten::add.Tensor') only"
            ),
        ),
        Deprecation(
            key="outcomes-capability-absent",
            what="conformance.outcomes.CAPABILITY_ABSENT",
            since="0.5.0",
            error_in="0.7.0",
            replacement=(
                "import it from conformance.descriptor (from conformance.descriptor import CAPABILITY_ABSENT), "
                "where it is derived from the descriptor's capability fields"
            ),
        ),
        Deprecation(
            key="probes-module",
            what="conformance.probes (the output comparison, renamed)",
            since="0.6.0",
            error_in="0.7.0",
            replacement=(
                "import the comparison from conformance.comparison "
                "(from conformance.comparison import assert_outputs_close, closeness)"
            ),
        ),
        Deprecation(
            key="supported_ops",
            what="BackendDescriptor.supported_ops given (operator names declared for float32)",
            since="0.6.0",
            error_in="0.7.0",
            replacement=(
                "declare the operators in operators= with OperatorSupport: "
                "operators=OperatorSupport.float32(*names) declares what supported_ops=names did, and "
                "dataclasses.replace(d, operators=OperatorSupport({op: d.operators[op] for op in names})) "
                "narrows a copy; reading d.supported_ops still gives the declared operator names"
            ),
        ),
    )
}


def _release(version: str) -> tuple[int, ...]:
    from conformance.version_numbers import release

    return release(version)


def is_error(key: str, suite_version: str | None = None) -> bool:
    """Whether the deprecated form ``key`` is an error in ``suite_version`` (default: this suite's), that
    is whether its ``error_in`` is reached."""
    return _release(suite_version or version.SUITE_VERSION) >= _release(DEPRECATIONS[key].error_in)


def notice(key: str, detail: str, suite_version: str | None = None) -> str:
    """The message for one use of the deprecated form ``key`` (``detail`` says where and what): a warning
    before its ``error_in``, an error's reason from then on."""
    d = DEPRECATIONS[key]
    if is_error(key, suite_version):
        return f"{detail}: no longer accepted since suite {d.error_in} (deprecated in {d.since}); {d.replacement}"
    return f"{detail}: deprecated since suite {d.since}, an error from suite {d.error_in}; {d.replacement}"
