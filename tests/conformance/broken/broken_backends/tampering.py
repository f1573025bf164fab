"""A descriptor module that tampers with the suite when it is imported: it replaces the verdict
function so that every report says conformant, and every check's code with one that passes (PKG-2
would fail its private import). Whatever the vendor's module does, it must run only in the vendor
process, never in the process that judges."""

import conformance.checks
import conformance.report
from broken_backends.descriptors import PRIVATE_IMPORT

conformance.report.verdict = lambda results, certify, capabilities=(), interrupted=False: (
    "certified" if certify else "conformant",
    [],
    [],
)
for _check in conformance.checks.all_checks():
    object.__setattr__(_check, "run", lambda ctx: "passed (forged)")
DESCRIPTOR = PRIVATE_IMPORT
