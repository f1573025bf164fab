"""The vendor's own interpreter (``executorch-conformance run --vendor-python PATH``).

With it, every vendor process (describing the backend, lowering, loading, executing) runs PATH, with the
vendor's environment and import path as PATH computes them (its ``site`` runs there, .pth files
included), while the launcher, the judge and its pytest run stay in the suite's own environment, which
need not hold the backend at all. Contract:

- ``probe(path)`` runs ``PATH -c`` once, in a child process (the vendor's start-up code runs there, never
  in this process), bounded by ``timeout``. It returns what the interpreter is (``VendorInterpreter``),
  or raises ``VendorPythonError`` naming the path and what is wrong: not found, not executable, not a
  Python that answers, another Python release than the suite's (the vendor process runs the suite's own
  modules and exchanges pickles with the judge, so the two must be one ``major.minor``), no executorch or
  torch installed, or a start-up that hung or died.
- ``use(interpreter)`` makes the vendor processes started from now on in this process run it
  (``launch``); ``current()`` is the one in use, None for the suite's own interpreter.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

#: How long the interpreter may take to start and answer (its site and .pth files run first).
PROBE_TIMEOUT_S = 120.0
#: The prefix of the answer line of the probe: a .pth of the vendor's may print lines before it.
ANSWER_MARK = "executorch-conformance-vendor-python:"
_SCRIPT = (
    "import json, sys\n"
    "import importlib.metadata as m\n"
    "def v(n):\n"
    "    try:\n"
    "        return m.version(n)\n"
    "    except Exception:\n"
    "        return None\n"
    "print(" + repr(ANSWER_MARK) + " + json.dumps({'version': list(sys.version_info[:3]), "
    "'executable': sys.executable, 'sys_path': sys.path[1:], "
    "'executorch': v('executorch'), 'torch': v('torch')}), flush=True)\n"
)


class VendorPythonError(ValueError):
    """The interpreter given for the vendor side cannot serve; the message names it and says why."""


@dataclasses.dataclass(frozen=True)
class VendorInterpreter:
    """An interpreter of the vendor's environment, as ``probe`` found it."""

    #: the path given (what the vendor processes run)
    path: str
    #: its ``sys.executable`` and release (``3.11.7``)
    executable: str
    python: str
    #: its import path with its site (.pth directories, PYTHONPATH), the script's directory left out
    sys_path: tuple[str, ...]
    executorch: str | None
    torch: str | None

    def record(self) -> dict[str, Any]:
        """What the report's ``environment.vendor_python`` says of it."""
        return {
            "path": self.path,
            "executable": self.executable,
            "python": self.python,
            "executorch": self.executorch,
            "torch": self.torch,
        }


def probe(
    path: str, timeout: float = PROBE_TIMEOUT_S, environ: dict[str, str] | None = None
) -> VendorInterpreter:
    """The interpreter at ``path``, checked (see the module contract), started with ``environ`` (the vendor's
    variables, PYTHONPATH included; default: this process's); VendorPythonError otherwise."""
    given = Path(path)
    suite = ".".join(map(str, sys.version_info[:2]))
    if not given.exists():
        raise VendorPythonError(f"{path} does not exist: give the python of the vendor's environment")
    if given.is_dir() or not os.access(given, os.X_OK):
        raise VendorPythonError(
            f"{path} is not an executable file: give the python of the vendor's environment"
        )
    try:
        done = subprocess.run(
            [str(given), "-c", _SCRIPT],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            env=environ,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise VendorPythonError(
            f"{path} did not start and answer within {timeout:g} s (does start-up code of its environment, "
            "a .pth file or sitecustomize, hang?)"
        ) from None
    except OSError as exc:
        raise VendorPythonError(f"{path} cannot be run: {exc.strerror or exc}") from None
    found = None
    for text in done.stdout.decode("utf-8", "replace").splitlines():
        if text.startswith(ANSWER_MARK):
            try:
                found = json.loads(text[len(ANSWER_MARK) :])
            except ValueError:
                found = None
    if not isinstance(found, dict):
        last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["(nothing on stderr)"]
        raise VendorPythonError(
            f"{path} is not a Python interpreter that answers (exit status {done.returncode}; it said: "
            f"{last[0][:300]})"
        )
    try:
        version = [int(x) for x in found["version"]]
        interpreter = VendorInterpreter(
            path=str(given),
            executable=str(found["executable"]),
            python=".".join(map(str, version)),
            sys_path=tuple(str(p) for p in found["sys_path"] if p),
            executorch=found["executorch"],
            torch=found["torch"],
        )
    except (KeyError, TypeError, ValueError):
        raise VendorPythonError(f"{path} answered, but not as a Python interpreter does") from None
    if version[:2] != list(sys.version_info[:2]):
        raise VendorPythonError(
            f"{path} is Python {interpreter.python}, the suite runs on Python {suite}: the vendor process runs "
            f"the suite's own modules, so make the vendor's environment with Python {suite}"
        )
    missing = [name for name in ("executorch", "torch") if getattr(interpreter, name) is None]
    if missing:
        raise VendorPythonError(
            f"{path} has no {' and no '.join(missing)} installed: the vendor's environment holds the backend "
            "with the executorch and torch it is built for"
        )
    return interpreter


class _InUse:
    value: VendorInterpreter | None = None


_in_use = _InUse()


def use(interpreter: VendorInterpreter | None) -> None:
    """The vendor processes started from now on run ``interpreter`` (None: the suite's own)."""
    _in_use.value = interpreter


def current() -> VendorInterpreter | None:
    """The interpreter the vendor processes run, None for the suite's own."""
    return _in_use.value
