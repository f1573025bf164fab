"""The one exception of ``conformance.compat``: the input cannot be judged (not a .pte, a malformed
version, a backend nobody describes, a rules file that is not valid). Its message says what was wrong
and what to do; the CLI prints it as one line and exits 2."""

from __future__ import annotations


class CompatInputError(ValueError):
    """The program, a version or a backend given to ``compat`` cannot be used; the message says why."""
