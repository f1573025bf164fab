"""Will this .pte run there? Answered without the device (``executorch-conformance compat``, docs/compat.md).

``predict(program, runtime, backends, rules)`` returns a ``Prediction``: for the program and for each
delegate, runs / refused (what the user would see there, and what to change) / unknown (no basis), and
why. ``find_rules(backend_ids)`` (``conformance.compat.lookup``) reads the acceptance rules the
installed backends' descriptors declare.
"""

from conformance.compat.decide import (
    EXIT_CODES,
    REFUSED,
    RUNS,
    UNKNOWN,
    Answer,
    BackendSpec,
    Prediction,
    parse_backend,
    parse_runtime,
    predict,
)
from conformance.compat.errors import CompatInputError
from conformance.compat.measured import Measured, load_measured
from conformance.compat.program import ProgramFacts, read_program
from conformance.compat.rules import AcceptanceRules, RuntimeRule, load_rules, parse_rules

__all__ = [
    "EXIT_CODES",
    "REFUSED",
    "RUNS",
    "UNKNOWN",
    "AcceptanceRules",
    "Answer",
    "BackendSpec",
    "CompatInputError",
    "Measured",
    "Prediction",
    "ProgramFacts",
    "RuntimeRule",
    "load_measured",
    "load_rules",
    "parse_backend",
    "parse_rules",
    "parse_runtime",
    "predict",
    "read_program",
]
