"""OpenVINO delegate (executorch 1.5.1, openvino 2025.4.1): lowering the same program twice in one
process gives different delegate blobs (different sizes).

Standalone (torch, executorch 1.5.1, openvino, nncf; no conformance-suite code):

    python openvino_blob_not_deterministic.py

What it does: exports a small MLP and lowers it with OpenvinoPartitioner twice in this process, then
once in each of two fresh processes, and compares the delegates' processed bytes.

Seen: the two blobs of one process differ in length (15350 and 15366 bytes for this model), in the
model section of OpenVINO's export (the CPU plugin's export obfuscates the model's XML; the
differing bytes are names); the blobs of two fresh processes are identical. So the blob depends on
how many models the process converted before: OpenVINO names the nodes the PyTorch frontend leaves
unnamed from a process-wide instance counter (``Constant_1234``), and the export keeps those names.
A reproducible .pte (caching, hashing, comparing exports) needs names that depend on the program
only: the frontend (or ExecuTorch's preprocess) should give every node a name derived from the graph.

Exit status: 1 while the blobs of one process differ, 0 when they are equal.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys

import torch
from executorch.backends.openvino.partitioner import OpenvinoPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.exir.backend.compile_spec_schema import CompileSpec


def blob() -> bytes:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).eval()
    program = torch.export.export(model, (torch.randn(4, 16),))
    edge = to_edge_transform_and_lower(
        program, partitioner=[OpenvinoPartitioner([CompileSpec("device", b"CPU")])]
    )
    (lowered,) = [m for _, m in edge.exported_program().graph_module.named_children()]
    return bytes(lowered.processed_bytes)


def describe(data: bytes) -> str:
    return f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}"


def main() -> int:
    if sys.argv[1:] == ["--one"]:
        print(describe(blob()))
        return 0
    first, second = blob(), blob()
    print(f"this process, first lowering:  {describe(first)}")
    print(f"this process, second lowering: {describe(second)}")
    fresh = [
        subprocess.run(
            [sys.executable, __file__, "--one"], capture_output=True, text=True, check=True
        ).stdout.split("\n")[-2]
        for _ in range(2)
    ]
    print(f"two fresh processes:           {fresh[0]} / {fresh[1]}")
    if first != second:
        at = next(i for i in range(min(len(first), len(second))) if first[i] != second[i])
        print(f"DEFECT: the two lowerings of one process differ, first at byte {at}")
        return 1
    print("the lowerings are identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
