"""Version of the suite, and which report versions ``verify`` still accepts."""

SUITE_VERSION = "0.3.0"

#: Reports written by these suite versions are verified (semver range). Within
#: it, ``verify`` accepts only the versions released in conformance/released/,
#: each within its validity window.
SUPPORTED_REPORT_SUITE_VERSIONS = ">=0.1.0,<0.3.0"

#: The ``schema`` field of every report, and the version of the JSON report schema (docs/report-schema.md).
REPORT_SCHEMA = "executorch-conformance-report"
REPORT_SCHEMA_VERSION = 2
