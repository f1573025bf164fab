"""What memory a process did not have costs on this machine when first written, and what that makes the
least CPU NDATA-5's program can take here.

    .venv/bin/python benchmarks/first_touch_memory.py [--gib 1] [--idle 10]

NDATA-5 (C-NDATA-5) lowers a program whose named data crosses 2^32 bytes: 4.25 GiB of weights. Three
copies of them are written into memory the vendor process or the kernel did not have before: the weights
themselves (the eager module), the bytes the backend hands ExecuTorch (``NamedDataStoreOutput`` holds
``bytes`` or a file, so a backend cannot hand it the tensor's own memory), and the .ptd file written through
the page cache. The runtime maps the .ptd and adds no copy. So at 2^32 the run writes at least
``3 * 4.25`` GiB of fresh memory, whatever the backend.

A first write into a page costs a page fault and the zeroing of the page: on bare metal a fraction of a
second per GiB. On a virtual machine whose host takes back memory the guest has freed (free page reporting,
a balloon), a page the guest freed some seconds ago costs a fault in the host too, and that is what most of
a run's pages are. This prints, for ``--gib`` GiB, the CPU seconds per GiB of:

- writing memory this process has written before (what the copy itself costs);
- a first write into memory freed just before (the host still backs it);
- a first write after ``--idle`` seconds of rest (what the guest freed has been handed back);
- writing a file of that size through the page cache after the same rest;

and NDATA-5's floor: ``3 * 4.25`` GiB at the rate after rest (the file's for the .ptd).
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time

import numpy as np

GIB = 1 << 30
#: NDATA-5's weights at the boundary of 2^32 (conformance.large_weights: 17 weights of 2^32 / 16 bytes).
NDATA5_BYTES = 17 * (1 << 32) // 16
#: Copies of them written into fresh memory (see the module docstring).
NDATA5_COPIES = 3
#: What a chunk of the file write is copied from (written once before, so that it costs no first touch).
CHUNK = 64 << 20


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def first_write(n: int) -> float:
    """CPU seconds to allocate ``n`` bytes (fresh pages: numpy maps them) and write every page once; the
    memory is freed before it returns."""
    start = cpu_seconds()
    written = np.ones(n, dtype=np.uint8)
    seconds = cpu_seconds() - start
    del written
    return seconds


def rewrite(n: int) -> float:
    """CPU seconds to write ``n`` bytes this process has written before (the copy alone)."""
    buffer = np.ones(n, dtype=np.uint8)
    start = cpu_seconds()
    buffer.fill(2)
    return cpu_seconds() - start


def file_write(n: int, directory: str) -> float:
    """CPU seconds to write an ``n``-byte file through the page cache (from a buffer written before)."""
    chunk = np.ones(CHUNK, dtype=np.uint8).tobytes()
    fd, path = tempfile.mkstemp(prefix="first-touch-", dir=directory)
    try:
        start = cpu_seconds()
        left = n
        while left > 0:
            left -= os.write(fd, chunk[: min(left, CHUNK)])
        return cpu_seconds() - start
    finally:
        os.close(fd)
        os.unlink(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0, help="GiB written by each measurement")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of rest before a cold measurement")
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the file is written")
    args = parser.parse_args()
    if not 0 < args.gib <= 64 or not 0 <= args.idle <= 600:
        parser.error("--gib must be in (0, 64] and --idle in [0, 600]")
    n = int(args.gib * GIB)
    per_gib = n / GIB
    rows = [("rewrite of written memory", rewrite(n))]
    first_write(n)  # frees n bytes the host still backs
    rows.append(("first write, just freed", first_write(n)))
    time.sleep(args.idle)
    cold = first_write(n)
    rows.append((f"first write after {args.idle:g} s of rest", cold))
    time.sleep(args.idle)
    cold_file = file_write(n, args.dir)
    rows.append((f"file write after {args.idle:g} s of rest", cold_file))
    base = rows[0][1] / per_gib
    print(f"{'':40s} {'CPU s/GiB':>10s} {'x rewrite':>10s}")
    for name, seconds in rows:
        rate = seconds / per_gib
        print(f"{name:40s} {rate:10.2f} {rate / base if base else float('nan'):10.1f}")
    ndata5 = NDATA5_BYTES / GIB
    floor = ndata5 * ((NDATA5_COPIES - 1) * cold + cold_file) / per_gib
    print(
        f"NDATA-5 at 2^32 writes at least {NDATA5_COPIES} x {ndata5:.2f} GiB of fresh memory: "
        f"{floor:.1f} CPU s here at the rates after rest"
    )


if __name__ == "__main__":
    main()
