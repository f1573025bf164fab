"""Runs grid cells (matrix/grid_case.py) in child processes and turns what
they print into cell records.

``run_cases([(program, manifest), ...], library)`` returns one dict per case:
status, detail, max_deviation, the runtime's log lines and the command that
reproduces that cell alone. Cases run in one child per call; a crash or hang
ends only the case in progress (recorded as ``crashed with SIG...`` /
``hung``) and a new child resumes after it.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: Seconds one case may take before its child is killed.
CASE_TIMEOUT = 120


def case_command(program: Path, expected: Path, library: Path | None) -> str:
    """The command that reproduces one cell, from the repository root in the release's env."""
    cmd = ["python", "-m", "matrix.grid_case", _from_repo(program), "--expected", _from_repo(expected)]
    if library:
        cmd += ["--library", str(library)]
    return shlex.join(cmd).replace(f"{REPO}/", "")


def _from_repo(path: Path) -> str:
    """``path`` relative to the repository root when it lies inside it."""
    try:
        return str(Path(path).resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def _by_case(text: str) -> dict[int, list[str]]:
    """Lines of a batch's output, split at the ``@@case N`` markers."""
    parts: dict[int, list[str]] = {}
    current = -1
    for line in text.splitlines():
        if line.startswith("@@case "):
            current = int(line.split()[1])
            parts[current] = []
        elif current >= 0:
            parts[current].append(line.strip())
    return parts


def _log_lines(lines: list[str]) -> list[str]:
    """The runtime's own log lines (ExecuTorch's ``[file:line]`` prefix) and the backend's."""
    return [line for line in lines if line.startswith("[") or "ReferenceBackend" in line][:6]


def run_cases(
    cases: list[tuple[Path, Path]], library: Path | None, child: list[str] | None = None
) -> list[dict]:
    """Cells for ``cases`` ([program, manifest]): batches in child processes, a crash ends only its case.

    ``child``: the child's command before ``--batch FILE`` (default: this Python, ``-m matrix.grid_case``).
    """
    cells: list[dict | None] = [None] * len(cases)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    first = 0
    while first < len(cases):
        batch_file = Path(tempfile.mkstemp(suffix=".json")[1])
        batch_file.write_text(json.dumps([[str(p), str(m)] for p, m in cases[first:]]))
        cmd = [*(child or [sys.executable, "-m", "matrix.grid_case"]), "--batch", str(batch_file)]
        if library:
            cmd += ["--library", str(library)]
        hung = False
        try:
            proc = subprocess.run(
                cmd,
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=CASE_TIMEOUT * (len(cases) - first),
            )
            out, err, code = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as exc:
            out, err, code, hung = _text(exc.stdout), _text(exc.stderr), None, True
        finally:
            batch_file.unlink(missing_ok=True)
        results = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        refused_library = [r for r in results if "index" not in r]
        if refused_library:
            for i in range(first, len(cases)):
                cells[i] = {**refused_library[0], "log": _log_lines(err.splitlines())}
            break
        logs = _by_case(err)
        for r in results:
            i = first + r.pop("index")
            cells[i] = {**r, "log": _log_lines(logs.get(r.get("index", i - first), []))}
        missing = [i for i in range(first, len(cases)) if cells[i] is None]
        if not missing:
            break
        i = missing[0]
        if hung:
            detail = f"no result within {CASE_TIMEOUT * (len(cases) - first)} s"
            status = "hung"
        elif code is not None and code < 0:
            detail, status = f"crashed with {signal.Signals(-code).name}", "crashed"
        else:
            tail = ([line for line in err.splitlines() if line.strip()] or ["no output"])[-1]
            detail, status = f"exit {code} without a result: {tail[:200]}", "crashed"
        cells[i] = {
            "status": status,
            "detail": detail,
            "max_deviation": None,
            "log": _log_lines(logs.get(i - first, [])),
        }
        first = i + 1
    for (program, expected), cell in zip(cases, cells):
        assert cell is not None  # the loop above fills every cell
        cell["command"] = case_command(program, expected, library)
    return cells  # type: ignore[return-value]


def _text(data) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")
