"""Where a vendor task's time went: its runtime's ``init()``, its executes and its lowering.

Contract:

- Each step a task marks (``envelope.step``) is also written, with the time it started
  (``time.monotonic()``, which on Linux is one clock for every process of the machine), to the task's
  times file (its log path with ``TIMES_SUFFIX``), one ``<seconds>\\t<step>`` line per step.
- A step lasts until the next step starts, or the task ends (``ended``, the parent's clock when it saw the
  task end). ``kind`` sorts a step by its text: ``init`` (loading a program: the runtime's ``init()`` of each
  delegate runs then), ``execute`` (executing loaded methods), ``lowering`` (export, lowering,
  ``to_executorch()``); anything else is counted nowhere.
- ``read`` never fails: a missing, truncated or foreign file counts what it can (nothing at worst). These
  figures are for reading (the report's ``init_s``, ``execute_s``, ``lowering_s``), never for judging.
"""

from __future__ import annotations

from pathlib import Path

TIMES_SUFFIX = ".times"
#: The kinds of step counted; a check records each as ``<kind>_s`` (the report's ``init_s``, ...).
KINDS = ("init", "execute", "lowering")
#: How a step that loads a program begins (the runtime's ``init()`` runs in it); also what the task clock
#: (``process.TaskClock``) does not charge.
LOAD_STEP = "load of "
#: The most of a times file read (a task marks a few steps per loaded program; a runaway one is cut).
_LIMIT = 1 << 20


def kind(step: str) -> str | None:
    """The kind of the step described ``step`` (see the module contract), or None."""
    if step.startswith(LOAD_STEP):
        return "init"
    if step.startswith("execute of ") or " executes of " in step:
        return "execute"
    if step.startswith(("lowering ", "torch.export.export ", "to_executorch() ")):
        return "lowering"
    return None


def line(started: float, step: str) -> str:
    """The times-file line of a step that started at ``started``."""
    return f"{started:.6f}\t{step}\n"


def read(path: Path, ended: float) -> dict[str, float]:
    """Seconds per kind of the task whose times file is ``path``, the task having ended at ``ended``."""
    try:
        with open(path, "rb") as f:
            text = f.read(_LIMIT).decode("utf-8", "replace")
    except OSError:
        return {}
    marks: list[tuple[float, str]] = []
    for row in text.splitlines():
        stamp, sep, step = row.partition("\t")
        try:
            value = float(stamp)
        except ValueError:
            continue
        if sep:
            marks.append((value, step))
    seconds: dict[str, float] = {}
    for (started, step), (until, _) in zip(marks, [*marks[1:], (ended, "")], strict=True):
        which = kind(step)
        if which is not None and until > started:
            seconds[which] = seconds.get(which, 0.0) + until - started
    return seconds


def add(total: dict[str, float], more: dict[str, float]) -> None:
    """Adds the seconds per kind ``more`` into ``total``."""
    for which, value in more.items():
        total[which] = total.get(which, 0.0) + value


def since(total: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    """The seconds per kind added to ``total`` since it was ``before`` (kinds that grew only)."""
    return {
        which: value - before.get(which, 0.0)
        for which, value in total.items()
        if value > before.get(which, 0.0)
    }
