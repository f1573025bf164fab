"""The bundle entry of RT-10 (kind ``concurrent``): written one way for a target's runner and for the runner
library in the vendor process (``conformance.vendor.concurrency_tasks``), and its results read back one way.

``add_concurrent_entry`` puts the programs and the input sets into a bundle and returns the function that
reads the results directory: ``{"outputs": {thread: {"sample", "set", "outputs"}}}`` with each thread's
outputs of every execute, in order and packed (``records.pack``), or ``{"error", "step"}`` when a load
or an execute failed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.targets.bundle import Bundle, decode_tensors, read_result
from conformance.vendor.records import pack, unpack

ENTRY = "concurrent"


def add_concurrent_entry(
    bundle: Bundle,
    programs: list[tuple[str, bytes]],
    input_sets: list[tuple[str, Any]],
    threads: int,
    iterations: int,
) -> Callable[[Path], dict]:
    """``programs``: (sample, .pte bytes); ``input_sets``: (sample, packed inputs), thread t running set
    t mod len(input_sets); each thread loads its own method and executes it ``iterations`` times."""
    listed = bundle.add_programs(programs)
    names = {key: name for (key, _), (name, _) in zip(listed, programs)}
    by_name = {name: key for key, name in names.items()}
    sets = [
        (s, by_name[name], bundle.add_tensors(list(unpack(packed))))
        for s, (name, packed) in enumerate(input_sets)
    ]
    bundle.entry(
        ENTRY,
        "concurrent",
        f"the samples ({len(programs)} programs, {len(input_sets)} input sets)",
        program=listed,
        rounds=sets,
        threads=threads,
        iterations=iterations,
    )

    def handle(results: Path) -> dict:
        r = read_result(results / f"{ENTRY}.txt")
        if not r.ok:
            return {"error": r.error or "", "step": r.step or "concurrent executes"}
        return {
            "outputs": {
                thread: {
                    "sample": names[name],
                    "set": input_set,
                    "outputs": pack(decode_tensors((results / file).read_bytes(), file)),
                }
                for name, thread, input_set, file in r.output_files
            }
        }

    return handle
