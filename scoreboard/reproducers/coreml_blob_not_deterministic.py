"""Core ML delegate (executorch 1.5.1, coremltools 9.0): lowering the same module twice gives different
delegate payloads, so a rebuilt program never matches the one it replaces byte for byte.

Standalone (torch, executorch 1.5.1 and the coremltools it pulls in; no conformance-suite code; runs on
Linux, where Core ML lowers ahead of time):

    python coreml_blob_not_deterministic.py

What it does: lowers one small module (linear, ReLU, linear) twice in one process with CoreMLPartitioner,
compares the two delegate payloads, and lists the UUIDs each holds.

Seen (x86-64 Linux): the payloads have the same size (10356 bytes) and differ in three UUIDs each: the
model identifier ``executorch_<uuid4>`` that the Core ML preprocess writes, and identifiers coremltools'
package writer draws for each lowering.

Exit status: 1 while the two payloads differ, 0 when they are equal.
"""

from __future__ import annotations

import re
import sys

import torch
from executorch.backends.apple.coreml.partition import CoreMLPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.exir.lowered_backend_module import LoweredBackendModule

UUID = re.compile(rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def payload() -> bytes:
    torch.manual_seed(0)
    module, x = Small().eval(), torch.randn(4, 16)
    edge = to_edge_transform_and_lower(torch.export.export(module, (x,)), partitioner=[CoreMLPartitioner()])
    graph = edge.exported_program().graph_module
    (lowered,) = [m for _, m in graph.named_modules() if isinstance(m, LoweredBackendModule)]
    return bytes(lowered.processed_bytes)


def main() -> int:
    first, second = payload(), payload()
    if first == second:
        print(f"the two payloads are equal ({len(first)} bytes)")
        return 0
    at = next(i for i, (a, b) in enumerate(zip(first, second)) if a != b)
    print(f"the two payloads differ: {len(first)} and {len(second)} bytes, first difference at byte {at}")
    a, b = set(UUID.findall(first)), set(UUID.findall(second))
    print(f"UUIDs only in the first: {sorted(x.decode() for x in a - b)}")
    print(f"UUIDs only in the second: {sorted(x.decode() for x in b - a)}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
