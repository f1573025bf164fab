"""Core ML delegate (executorch 1.5.1, coremltools 9.0): a static KV cache written at several positions in
one call (an LLM's prefill) does not lower: the conversion fails with "Input squeeze_0 has rank 1 != other
inputs rank 0". The same update of one position (decode) lowers.

Standalone (torch, executorch 1.5.1 and the coremltools it pulls in; no conformance-suite code; runs on
Linux, where Core ML lowers ahead of time):

    python coreml_cache_update_fails_to_lower.py

What it does: a module with a registered cache buffer (1, 2, 8, 4) writes its input at positions
``input_pos + arange(n)`` with ``index_copy_`` (as a Llama-style decoder updates its KV cache) and returns
the cache; it is exported for n = 3 (prefill) and n = 1 (decode) and lowered with CoreMLPartitioner for
iOS 18 (the deployment target Core ML state needs).

Seen (x86-64 Linux): n = 1 lowers; n = 3 raises ValueError "Input squeeze_0 has rank 1 != other inputs
rank 0" in coremltools' conversion.

Exit status: 1 while the prefill shape fails to lower, 0 when both lower.
"""

from __future__ import annotations

import sys

import coremltools as ct
import torch
from executorch.backends.apple.coreml.compiler import CoreMLBackend
from executorch.backends.apple.coreml.partition import CoreMLPartitioner
from executorch.exir import to_edge_transform_and_lower


class CacheWrite(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("cache", torch.zeros(1, 2, 8, 4))

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        positions = input_pos + torch.arange(x.shape[2])
        self.cache.index_copy_(2, positions, x)
        return self.cache * 1.0


def lowers(n: int) -> str | None:
    """None if the module exported for ``n`` positions lowers, else the error."""
    specs = CoreMLBackend.generate_compile_specs(minimum_deployment_target=ct.target.iOS18)
    inputs = (torch.randn(1, 2, n, 4), torch.tensor([0]))
    try:
        edge = to_edge_transform_and_lower(
            torch.export.export(CacheWrite().eval(), inputs),
            partitioner=[CoreMLPartitioner(compile_specs=specs)],
        )
        edge.to_executorch()
    except Exception as exc:  # noqa: BLE001  the conversion's error is the finding
        return f"{type(exc).__name__}: {exc}"
    return None


def main() -> int:
    failed = False
    for n, what in ((1, "decode, 1 position"), (3, "prefill, 3 positions")):
        error = lowers(n)
        print(f"{what}: {'lowers' if error is None else 'fails: ' + error[:300]}")
        failed |= error is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
