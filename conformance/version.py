"""Version of the suite, and which report versions ``verify`` still accepts."""

SUITE_VERSION = "0.6.0"

#: ``verify`` accepts reports of the suite versions released in conformance/released/, each within its
#: validity window.

#: The ``schema`` field of every report, and the version of the JSON report schema (docs/report-schema.md).
REPORT_SCHEMA = "executorch-conformance-report"
REPORT_SCHEMA_VERSION = 3
