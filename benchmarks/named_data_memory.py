"""Resident memory of one versus two programs that share their weights through
one .ptd file, against the same programs with the weights inside their blobs.

    .venv/bin/python benchmarks/named_data_memory.py [--layers 4] [--width 2048]

Exports an MLP (``layers`` Linear(width, width), 64 MiB of float32 weights by
default) to the reference backend twice, for batch 1 and batch 8 (shapes are
static, so each batch size is its own program):

* inline: every weight inside the delegate blob of each .pte;
* shared: every weight of 1 MiB or more as named data in one external file,
  bench_weights.ptd, which both exports write identically.

Then, in a fresh process per layout, loads the batch-1 program, runs it, loads
the batch-8 program, runs it, and prints the memory after each step from
/proc/self/status (VmRSS, RssAnon, RssFile) and /proc/self/smaps_rollup (Pss).
The Python runtime maps the .pte and the .ptd with mmap and the backend reads
the weights in place from either, so no program adds a private copy of them. RSS counts a file page
once per mapping, so RssFile grows by the weights again when the second
program maps the same .ptd; Pss splits a page among its mappings and shows
the physical cost: one copy.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MIB = 1 << 20
BATCHES = (1, 8)
FILE_TAG = "bench_weights"


def memory() -> dict[str, int]:
    """VmRSS, RssAnon, RssFile and Pss of this process, in bytes."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile"):
            out[name] = int(value.split()[0]) * 1024
    try:
        for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                out["Pss"] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return out


def make_model(layers: int, width: int):
    import torch

    torch.manual_seed(0)
    mods = []
    for i in range(layers):
        mods.append(torch.nn.Linear(width, width))
        if i + 1 < layers:
            mods.append(torch.nn.ReLU())
    return torch.nn.Sequential(*mods).eval()


def export(out: Path, layers: int, width: int) -> dict:
    """Writes inline_b{N}.pte, shared_b{N}.pte and bench_weights.ptd into ``out``."""
    import torch
    from executorch.exir import to_edge_transform_and_lower

    import reference_backend

    model = make_model(layers, width)
    weights = sum(p.numel() * 4 for n, p in model.named_parameters() if n.endswith("weight"))
    sizes = {"weights_bytes": weights}
    for layout, specs in (("inline", []), ("shared", reference_backend.named_data_specs(MIB, FILE_TAG))):
        for batch in BATCHES:
            start = time.perf_counter()
            x = torch.randn(batch, width)
            edge = to_edge_transform_and_lower(
                torch.export.export(model, (x,)), partitioner=[reference_backend.ReferencePartitioner(specs)]
            )
            program = edge.to_executorch()
            pte = out / f"{layout}_b{batch}.pte"
            with open(pte, "wb") as f:
                program.write_to_file(f)
            if layout == "shared":
                data_dir = out / f"data_b{batch}"
                data_dir.mkdir()
                program.write_tensor_data_to_file(str(data_dir))
            sizes[pte.name] = pte.stat().st_size
            print(
                f"  exported {pte.name}: {pte.stat().st_size / MIB:.2f} MiB in {time.perf_counter() - start:.1f} s",
                flush=True,
            )
    first, second = (out / f"data_b{b}" / f"{FILE_TAG}.ptd" for b in BATCHES)
    if first.read_bytes() != second.read_bytes():
        raise SystemExit("the two exports wrote different .ptd files; they cannot share one")
    first.rename(out / f"{FILE_TAG}.ptd")
    sizes["ptd"] = (out / f"{FILE_TAG}.ptd").stat().st_size
    return sizes


def measure(directory: Path, layout: str, width: int) -> list[dict]:
    """In this (fresh) process: load and run the batch-1 then the batch-8 program."""
    import torch
    from executorch.runtime import Runtime

    import reference_backend

    reference_backend.load_runtime()
    steps = [{"step": "runtime loaded", **memory()}]
    keep = []
    for batch in BATCHES:
        pte = directory / f"{layout}_b{batch}.pte"
        ptd = directory / f"{FILE_TAG}.ptd" if layout == "shared" else None
        method = Runtime.get().load_program(pte, data_path=ptd).load_method("forward")
        method.execute([torch.randn(batch, width)])  # touches every weight page
        keep.append(method)
        steps.append({"step": f"+ program batch {batch} loaded and run", **memory()})
    return steps


def report(layout: str, steps: list[dict]) -> None:
    base = steps[0]
    print(f"\n{layout}: weights {'in each blob' if layout == 'inline' else f'in one shared {FILE_TAG}.ptd'}")
    print(
        f"  {'step':38s} {'VmRSS':>9s} {'RssAnon':>9s} {'RssFile':>9s} {'Pss':>9s}   (MiB above 'runtime loaded')"
    )
    for s in steps:
        row = " ".join(
            f"{(s.get(k, 0) - base.get(k, 0)) / MIB:9.1f}" for k in ("VmRSS", "RssAnon", "RssFile", "Pss")
        )
        print(f"  {s['step']:38s} {row}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--measure", nargs=2, metavar=("DIR", "LAYOUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure[0]), args.measure[1], args.width)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        print(
            f"exporting {args.layers} x Linear({args.width}, {args.width}) for batches {BATCHES} ...",
            flush=True,
        )
        sizes = export(out, args.layers, args.width)
        print(
            f"weights: {sizes['weights_bytes'] / MIB:.1f} MiB float32; {FILE_TAG}.ptd {sizes['ptd'] / MIB:.1f} MiB; "
            + ", ".join(f"{k} {v / MIB:.2f} MiB" for k, v in sizes.items() if k.endswith(".pte"))
        )
        results = {}
        for layout in ("inline", "shared"):
            proc = subprocess.run(
                [sys.executable, __file__, "--width", str(args.width), "--measure", str(out), layout],
                capture_output=True,
                text=True,
                check=True,
            )
            results[layout] = json.loads(proc.stdout.strip().splitlines()[-1])
            report(layout, results[layout])
        extra = {k: (r[2].get("Pss", 0) - r[1].get("Pss", 0)) / MIB for k, r in results.items()}
        print(
            f"\nsecond program's Pss cost: inline {extra['inline']:.1f} MiB, shared .ptd {extra['shared']:.1f} MiB"
        )


if __name__ == "__main__":
    main()
