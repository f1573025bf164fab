"""Small models used by the reference backend's tests and benchmark."""

from __future__ import annotations

import torch


class MLP(torch.nn.Module):
    """Linear -> ReLU -> Linear: fully delegated."""

    def __init__(self, d_in: int = 16, d_hidden: int = 32, d_out: int = 8) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(d_in, d_hidden)
        self.fc2 = torch.nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class ElementwiseChain(torch.nn.Module):
    """add/sub/mul/relu with broadcasting, alpha and a lifted constant."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.linspace(-1.0, 1.0, width))

    def forward(self, x, y):
        a = x * y + self.scale
        b = torch.sub(a, x, alpha=0.5)
        c = torch.relu(b) * 3.0
        return torch.add(c, y, alpha=2.0) - x


class PartiallyDelegated(torch.nn.Module):
    """Supported ops around two unsupported ones (sigmoid, softmax)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(12, 24)
        self.fc2 = torch.nn.Linear(24, 6)

    def forward(self, x):
        h = torch.sigmoid(self.fc1(x))
        return torch.softmax(torch.relu(self.fc2(h)) + 1.0, dim=-1)


class TwoOutputs(torch.nn.Module):
    """Two results, one of them also used by a later op."""

    def forward(self, a, b):
        s = a + b
        return s, torch.relu(s) * a


class NoBias(torch.nn.Module):
    """A linear layer without bias, on a 3-D input."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(5, 7, bias=False)

    def forward(self, x):
        return torch.relu(self.fc(x))


def cases() -> dict[str, tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]:
    """Name -> (model in eval mode, example inputs), seeded."""
    torch.manual_seed(0)
    return {
        "mlp": (MLP().eval(), (torch.randn(4, 16),)),
        "elementwise_chain": (ElementwiseChain().eval(), (torch.randn(4, 8), torch.randn(4, 8))),
        "partially_delegated": (PartiallyDelegated().eval(), (torch.randn(3, 12),)),
        "two_outputs": (TwoOutputs().eval(), (torch.randn(2, 3, 4), torch.randn(2, 3, 4))),
        "no_bias_3d": (NoBias().eval(), (torch.randn(2, 3, 5),)),
    }
