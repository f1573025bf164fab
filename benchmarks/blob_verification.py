"""How fast the runtime verifies and loads a large blob (issue 17).

    .venv/bin/python benchmarks/blob_verification.py [--mib 512]

1. Verification: the reference runtime's judge_blob (the code init() runs,
   through ctypes) on a MIB-MiB blob of header format 2 (CRC-32C, SSE4.2)
   and of format 1 (CRC-32, sliced tables), in GB/s. The named-data check at
   init is the same CRC-32C over each entry, so its cost per GB follows.
   The runtime verifies payloads of 32 MiB and more on several threads
   (backend_kit/parallel_crc.h; REFERENCE_BACKEND_PARALLEL_CRC, on by default).
2. Loading: ``load_method`` of a program whose blob holds a MIB-MiB constant
   (Linear without bias), from a file, against two baselines over the same
   file: mmap plus a read of one byte per page (what mapping costs), and mmap
   plus a read of every byte (numpy's vectorized OR over 8-byte words: the
   least any check that looks at every byte costs on one thread).
"""

from __future__ import annotations

import argparse
import mmap
import os
import tempfile
import time
from pathlib import Path


def best(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def verification(mib: int) -> None:
    from importlib.metadata import version

    import reference_backend
    from backend_kit.header import Header, encode
    from reference_backend.version import BLOB_FORMAT, __version__

    reference_backend.load_runtime()
    backend_version = tuple(int(p) for p in __version__.split(".")[:3])
    et_version = tuple(int(p) for p in version("executorch").split("+")[0].split(".")[:3])
    payload = os.urandom(mib << 20)
    for fmt in (2, 1):
        blob = encode(
            Header("ReferenceBackend", BLOB_FORMAT, backend_version, et_version, header_format_version=fmt),
            payload,
        )
        j = reference_backend.judge_blob(blob)
        assert j.verdict == "compatible", j.message
        t = best(lambda blob=blob: reference_backend.judge_blob(blob))
        rate = len(blob) / t / 1e9
        print(
            f"verify header format {fmt} ({'CRC-32C' if fmt == 2 else 'CRC-32'}): {mib} MiB in {t * 1e3:.1f} ms "
            f"= {rate:.2f} GB/s ({1e3 / rate:.0f} ms per GB)"
        )


def touch(path: Path) -> float:
    def run():
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            view = memoryview(m)
            total = 0
            for i in range(0, len(m), 4096):
                total += view[i]
            view.release()

    return best(run, 3)


def read_every_byte(path: Path) -> float:
    import numpy as np

    def run():
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            words = np.frombuffer(m, dtype=np.uint64, count=len(m) // 8)
            np.bitwise_or.reduce(words)
            del words

    return best(run, 3)


def loading(mib: int) -> None:
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    import reference_backend

    n = 4096
    k = (mib << 20) // 4 // n
    model = torch.nn.Linear(k, n, bias=False).eval()
    edge = to_edge_transform_and_lower(
        torch.export.export(model, (torch.randn(1, k),)),
        partitioner=[reference_backend.ReferencePartitioner()],
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.pte"
        path.write_bytes(edge.to_executorch().buffer)
        del edge
        reference_backend.load_runtime()
        size = path.stat().st_size
        t_touch = touch(path)
        t_read = read_every_byte(path)

        def load():
            Runtime.get().load_program(path).load_method("forward")

        t_load = best(load, 3)
        print(
            f"program of {size / 2**20:.0f} MiB: load_method {t_load * 1e3:.1f} ms; mmap + one byte per page "
            f"{t_touch * 1e3:.1f} ms ({t_load / t_touch:.2f}x); mmap + every byte {t_read * 1e3:.1f} ms "
            f"({t_load / t_read:.2f}x)"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=512)
    ap.add_argument("--skip-load", action="store_true")
    args = ap.parse_args()
    verification(args.mib)
    if not args.skip_load:
        loading(args.mib)


if __name__ == "__main__":
    main()
