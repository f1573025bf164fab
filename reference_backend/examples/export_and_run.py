"""Export a small model with the reference backend and run it through the
standard ExecuTorch runtime API.

    python reference_backend/examples/export_and_run.py [--output model.pte]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime

import reference_backend


class SmallMLP(torch.nn.Module):
    """Linear -> ReLU -> Linear, plus a log_softmax that stays on ExecuTorch's CPU kernels."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, help="where to write the .pte (default: a temporary file)")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = SmallMLP().eval()
    example = (torch.randn(2, 16),)
    program = to_edge_transform_and_lower(
        torch.export.export(model, example),
        partitioner=[reference_backend.ReferencePartitioner()],
    ).to_executorch()
    path = args.output or Path(tempfile.mkdtemp()) / "small_mlp.pte"
    path.write_bytes(program.buffer)

    reference_backend.load_runtime()
    method = Runtime.get().load_program(path).load_method("forward")
    (actual,) = method.execute(list(example))
    with torch.no_grad():
        expected = model(*example)
    print(f"wrote {path} ({path.stat().st_size} bytes)")
    print("delegates:", [r.blob.backend_id for r in reference_backend.inspect_program(path)])
    print("max abs difference from eager PyTorch:", float((actual - expected).abs().max()))
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    main()
