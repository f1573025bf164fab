"""The environment of the judging process: the suite's, never the vendor's (docs/contract.md, "The judging
process and the vendor's environment").

``executorch-conformance run`` (and verify, badge, sign) is started by an interpreter of the certifier's
environment, where the vendor's wheel may be installed. Before any check, the command re-executes itself
(``reexec``) as ``python -I -S conformance/judge/start.py ...``:

- ``-I``: no ``PYTHON*`` variable is read (PYTHONPATH, PYTHONSTARTUP, PYTHONWARNINGS, ...), no user site
  directory, not the current directory;
- ``-S``: the ``site`` module does not run, so no ``.pth`` file's ``import`` line, no ``sitecustomize``
  and no ``usercustomize`` of any installed package runs; ``start`` builds the import path itself;
- its environment lacks every variable that loads code (``scrub``): PYTEST_PLUGINS, PYTEST_ADDOPTS, the
  ``PYTHON*`` variables other than a few that only set I/O, LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH; and
  torch's automatic loading of device-backend entry points is off. One line names what was removed.

The vendor's environment is kept for the vendor process (``vendor_state``): the original variables and
the import path the vendor's interpreter computed with its ``site`` (``launch`` restores both in
each vendor process), so the backend runs exactly as it would be installed.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

#: The variable of the judging process that names the file holding the vendor's environment.
STATE_VARIABLE = "EXECUTORCH_CONFORMANCE_VENDOR_STATE"

#: PYTHON* variables that only set I/O or hashing: kept (the judge's interpreter ignores them under -I
#: anyway; children of the judge that are not isolated, such as auditwheel, still get them).
HARMLESS_PYTHON = frozenset(
    {"PYTHONIOENCODING", "PYTHONUTF8", "PYTHONUNBUFFERED", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE"}
)
#: Variables outside PYTHON* that make a process load code: pytest's plugins and options (-p MODULE),
#: the dynamic loader's preloaded and audit libraries and its search path.
CODE_LOADING = ("PYTEST_PLUGINS", "PYTEST_ADDOPTS", "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH")
#: Set in the judge: torch imports every installed ``torch.backends`` entry point otherwise.
JUDGE_SETS = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def is_isolated() -> bool:
    """Whether this interpreter was started as the judge is: -I and -S (flags of the interpreter itself,
    which no variable can fake)."""
    return bool(sys.flags.isolated and sys.flags.no_site)


def scrub(environ: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """(the judge's environment made from ``environ``, the names of the variables removed)."""
    removed = sorted(
        name
        for name in environ
        if name in CODE_LOADING
        or (name.startswith("PYTHON") and name not in HARMLESS_PYTHON)
        or name == STATE_VARIABLE
    )
    judge = {k: v for k, v in environ.items() if k not in removed}
    judge.update(JUDGE_SETS)
    return judge, removed


def site_path() -> list[str]:
    """The directories this interpreter's ``site`` put on the import path, as data for the judge (which
    runs no ``site``): its path without the script's directory or the current directory (the first entry),
    the PYTHONPATH entries and the user site directory, which -I leaves out. An environment layered on
    another (``site.addsitedir`` in a .pth, as some backends install) thereby reaches the judge as the
    directories it named, while the .pth's code does not run there."""
    import site

    dropped = {os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    user_site = site.getusersitepackages() if hasattr(site, "getusersitepackages") else None
    if user_site:
        dropped.add(os.path.abspath(user_site))
    entries = sys.path if sys.flags.safe_path else sys.path[1:]
    return [p for p in entries if p and os.path.abspath(p) not in dropped]


def reexec(argv: list[str]) -> None:
    """Replaces this process by the judge: ``python -I -S start.py ARGV`` with the scrubbed
    environment; the vendor's environment goes to a file only the judge and its vendor processes read.
    Never returns (OSError if the interpreter cannot be executed)."""
    judge, removed = scrub(dict(os.environ))
    state_dir = Path(tempfile.mkdtemp(prefix="conformance-judge-"))  # mode 0700
    state = state_dir / "vendor-environment.json"
    state.write_text(
        json.dumps(
            {
                "environ": dict(os.environ),
                "sys_path": list(sys.path),
                "site_path": site_path(),
                "removed": removed,
            },
            ensure_ascii=True,
        ),
        encoding="ascii",
    )
    judge[STATE_VARIABLE] = str(state)
    start = Path(__file__).with_name("start.py")
    sys.stdout.flush()
    sys.stderr.flush()
    # this interpreter again, with a fixed argument list and no shell: nothing of argv is interpreted
    os.execve(sys.executable, [sys.executable, "-I", "-S", str(start), *argv], judge)  # noqa: S606


_state: dict[str, Any] = {}


def vendor_state() -> dict[str, Any] | None:
    """{'environ': the vendor's variables, 'sys_path': its import path, 'removed': [names]} in the judge
    that ``reexec`` started; None elsewhere (a test calling ``main``, plain pytest)."""
    if "value" not in _state:
        value = None
        path = os.environ.get(STATE_VARIABLE)
        if path and is_isolated():
            try:
                value = json.loads(Path(path).read_text(encoding="ascii"))
            except (OSError, ValueError):
                value = None
        _state["value"] = value
    return _state["value"]


def vendor_import_path() -> list[str]:
    """Where the vendor's interpreter finds modules (to locate a vendor package's files without importing
    it): that of ``run --vendor-python`` (``interpreter``), else the import path the judge was
    started with, else this one's."""
    from conformance.vendor import interpreter as vendor_interpreter

    interpreter = vendor_interpreter.current()
    if interpreter is not None:
        return list(interpreter.sys_path)
    state = vendor_state()
    return [str(p) for p in state["sys_path"]] if state else list(sys.path)


def removed_note(command: str) -> str | None:
    """The line that names what the judge did not take from the environment, or None."""
    state = vendor_state()
    if not state or not state["removed"]:
        return None
    return (
        f"executorch-conformance {command}: the judging process runs without {', '.join(state['removed'])} "
        "(they load code); the vendor process keeps them"
    )


def worker_python() -> str | None:
    """The ``python=`` of pytest-xdist's popen workers in the judge: this interpreter, isolated (the
    workers judge too); None outside the judge."""
    if vendor_state() is None:
        return None
    import shlex

    return shlex.join([sys.executable, "-I", "-S", str(Path(__file__).with_name("start.py")), "--worker"])
