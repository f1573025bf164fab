"""The releases of a release grid: ``LABEL=PYTHON`` arguments, each checked before any vendor process starts.

``parse(arguments)`` returns one ``Release`` per argument, in the order given (rows and columns of the
grid), or raises ``ReleaseGridError`` naming the argument and what is wrong: not of the form
``LABEL=PYTHON``, a label given twice, fewer than two releases, or a python that cannot serve as a
vendor's interpreter (``conformance.vendor.interpreter.probe`` says why).
"""

from __future__ import annotations

import dataclasses

from conformance.vendor.interpreter import VendorInterpreter, VendorPythonError, probe


class ReleaseGridError(ValueError):
    """The grid cannot be run as asked; the message says which argument and what to do."""


@dataclasses.dataclass(frozen=True)
class Release:
    """One release of the backend: the label the grid shows and the interpreter that has it installed."""

    label: str
    interpreter: VendorInterpreter


def parse(arguments: list[str], prober=probe) -> list[Release]:
    """The releases named by ``arguments`` (``LABEL=PYTHON`` each); ReleaseGridError otherwise."""
    found: dict[str, Release] = {}
    for argument in arguments:
        label, sep, python = argument.partition("=")
        label, python = label.strip(), python.strip()
        if not sep or not label or not python:
            raise ReleaseGridError(
                f"--release {argument!r}: give LABEL=PYTHON, the release's label and the python of the "
                "environment it is installed in (--release 0.4.0=/envs/0.4.0/bin/python)"
            )
        if label in found:
            raise ReleaseGridError(f"--release {argument!r}: release {label!r} is given twice")
        try:
            interpreter = prober(python)
        except VendorPythonError as exc:
            raise ReleaseGridError(f"--release {argument!r}: {exc}") from None
        found[label] = Release(label, interpreter)
    if len(found) < 2:
        raise ReleaseGridError(
            f"a release grid needs at least two releases (--release LABEL=PYTHON, repeated); got {len(found)}"
        )
    return list(found.values())
