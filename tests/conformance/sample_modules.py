"""Small sample modules the tests of the state and method programs (conformance/vendor/state_tasks.py,
method_tasks.py) wrap: each is a shape of sample those programs must handle or refuse by name."""

from __future__ import annotations

import torch


class FixedBatch(torch.nn.Module):
    """Flattens its whole input: one row, or a larger dimension 0, does not take the view."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x.view(1, 12)) * 2


class Scalar(torch.nn.Module):
    """Takes an int besides its tensor: a sample no program of stacked tensors can wrap."""

    def forward(self, x: torch.Tensor, k: int) -> torch.Tensor:
        return x * k
