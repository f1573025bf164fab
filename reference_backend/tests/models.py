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
    """Supported ops around two unsupported ones (exp, log_softmax)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(12, 24)
        self.fc2 = torch.nn.Linear(24, 6)

    def forward(self, x):
        h = torch.exp(self.fc1(x))
        return torch.log_softmax(torch.relu(self.fc2(h)) + 1.0, dim=-1)


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


class PooledCNN(torch.nn.Module):
    """The float32 operators of blob format 1.4 in a small classifier: conv2d, clamp (relu6), max_pool2d with
    ceil_mode, avg_pool2d without the padding in its count, mean over H and W, a view, linear, softmax."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        y = torch.nn.functional.relu6(self.conv(x))
        y = torch.nn.functional.max_pool2d(y, 3, 2, 1, ceil_mode=True)
        y = torch.nn.functional.avg_pool2d(y, 3, 1, 1, count_include_pad=False)
        y = y.mean([2, 3], keepdim=True).reshape(x.shape[0], 8)
        return torch.softmax(self.fc(y), dim=-1)


class Activations(torch.nn.Module):
    """div with broadcasting, sigmoid, tanh, clamp with one bound, hardtanh, permute and view."""

    def forward(self, x, y):
        a = torch.sigmoid(x) / y
        b = torch.tanh(a).permute(2, 0, 1)
        c = torch.clamp(b, min=-0.25) + torch.nn.functional.hardtanh(b, -0.5, 0.5)
        return c.reshape(-1, 6), torch.softmax(c, dim=0)


def cases() -> dict[str, tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]:
    """Name -> (model in eval mode, example inputs), seeded."""
    torch.manual_seed(0)
    return {
        "mlp": (MLP().eval(), (torch.randn(4, 16),)),
        "elementwise_chain": (ElementwiseChain().eval(), (torch.randn(4, 8), torch.randn(4, 8))),
        "partially_delegated": (PartiallyDelegated().eval(), (torch.randn(3, 12),)),
        "two_outputs": (TwoOutputs().eval(), (torch.randn(2, 3, 4), torch.randn(2, 3, 4))),
        "no_bias_3d": (NoBias().eval(), (torch.randn(2, 3, 5),)),
        "pooled_cnn": (PooledCNN().eval(), (torch.randn(2, 3, 11, 11),)),
        "activations": (Activations().eval(), (torch.randn(2, 3, 4), torch.rand(3, 4) + 0.5)),
    }
