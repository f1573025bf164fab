"""A pytest plugin that a vendor's package could install (a ``pytest11`` entry point): loaded into the
process that judges, it would replace the verdict function so that every report says conformant. The
CLI loads only the suite's own plugins."""

import conformance.report

conformance.report.verdict = lambda results, certify, capabilities=(), interrupted=False: (
    "certified" if certify else "conformant",
    [],
    [],
)
