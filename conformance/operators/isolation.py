"""How the operator checks find the case that crashed or hung the vendor process, in bounded time.

A crash or a timeout costs a new vendor process (seconds to start) and a hang
the whole timeout, so a batch that crashes is not halved down to single cases
as a batch that raises is. ``Isolation`` decides what runs next:

- a crashed batch of several operators: the first case of each operator runs
  alone (a runtime that crashes on everything is found out in one crash per
  operator), then the rest of each operator's cases together;
- a crashed batch of one operator: its first case alone, then the rest in
  halves; so each crash is isolated in about log2(n) further crashes;
- after an operator's first isolated crash (or timeout) the suite runs no
  more of its cases: they are ``not_run``, the reason names the crash
  (after a crash, unless ``stop_operator`` is False: discovery, which must
  say of every case whether the partitioner claims it, bisects on);
- after ``CONSECUTIVE`` cases in a row crashed or timed out alone, with
  nothing passing in between, the runtime crashes whatever it is given: every
  case not yet run of the phase (lowering, execution) is ``not_run`` with that
  reason. (A crash of several cases neither counts nor breaks the streak: the
  single cases run after it decide.)

So a runtime that crashes on everything costs a phase 1 + ``CONSECUTIVE``
vendor-process starts, and one that crashes on some cases about 1 + log2(its
cases) per operator with a crashing case, whatever the backend does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

#: Cases in a row that crashed or timed out alone, with nothing passing in between, after which a phase stops.
CONSECUTIVE = 3


def op_of(key: str) -> tuple[str, str]:
    """('aten::add.Tensor', 'float32') of the case key 'aten::add.Tensor|float32|rank0'."""
    op, dtype, _ = key.split("|", 2)
    return op, dtype


@dataclasses.dataclass
class Isolation:
    """The crash bookkeeping of one phase ('lowering' or 'execution') of one run of the corpus."""

    phase: str
    #: (op, dtype) -> why its remaining cases are not run (the crash that stopped it)
    stopped: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)
    in_a_row: list[str] = dataclasses.field(default_factory=list)
    #: why every remaining case of the phase is not run (the breaker tripped), or None
    halted: str | None = None
    #: crashes and timeouts met (each one cost a vendor-process start)
    crashes: int = 0
    #: whether an operator's first isolated crash stops its other cases (a run: bounded time); False for
    #: discovery (benchmarks/operator_corpus.py --discover): a case that crashes says nothing of its operator's
    #: other cases, which are bisected on. A timeout (it costs the whole timeout) and CONSECUTIVE still stop.
    stop_operator: bool = True

    def not_run_reason(self, key: str) -> str | None:
        """Why ``key`` must not run now, or None."""
        return self.stopped.get(op_of(key)) or self.halted

    def passed(self) -> None:
        """A part lowered (or ran) without a crash."""
        self.in_a_row.clear()

    def crashed(self, keys: Sequence[str], reason: str, timed_out: bool = False) -> None:
        """The part ``keys`` crashed or (``timed_out``) timed out with ``reason``; a single case stops its
        operator (a crash only if ``stop_operator``)."""
        self.crashes += 1
        if len(keys) == 1:
            self.in_a_row.append(reason)
        if len(keys) == 1 and (self.stop_operator or timed_out):
            what = keys[0].rsplit("|", 1)[-1]
            self.stopped.setdefault(
                op_of(keys[0]),
                f"not run: the {self.phase} of case {what!r} of this operator {_short(reason)}; after a crash "
                "or timeout the suite runs no more cases of the operator (the run must end in bounded time)",
            )
        if len(self.in_a_row) >= CONSECUTIVE and self.halted is None:
            self.halted = (
                f"not run: the {self.phase} of {len(self.in_a_row)} operator cases in a row crashed or timed out, "
                f"with nothing passing in between (last: {_short(reason)}); the suite runs no more operator "
                "cases, as the runtime fails whatever it is given"
            )

    def isolate(self, keys: tuple[str, ...], run: Callable[[tuple[str, ...]], None]) -> None:
        """After the part ``keys`` (several cases) crashed: runs its parts as the module docstring says."""
        groups: dict[tuple[str, str], list[str]] = {}
        for key in keys:
            groups.setdefault(op_of(key), []).append(key)
        if len(groups) > 1:
            for group in groups.values():
                run((group[0],))
            for group in groups.values():
                if len(group) > 1:
                    run(tuple(group[1:]))
            return
        run(keys[:1])
        rest = keys[1:]
        if len(rest) > 1:
            half = len(rest) // 2
            run(rest[:half])
            run(rest[half:])
        elif rest:
            run(rest)


def _short(reason: str) -> str:
    """'crashed with SIGSEGV in execute of ...' cut before the runtime's log."""
    head = reason.split("; the runtime logged:", 1)[0]
    return head if len(head) <= 300 else head[:299] + "…"
