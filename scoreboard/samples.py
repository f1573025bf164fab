"""Sample models the scoreboard's descriptors share (each descriptor picks those its backend runs)."""

from __future__ import annotations

import torch

from conformance.descriptor import SampleModel


class Small(torch.nn.Module):
    """Linear 8 -> 4, relu."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


class MLP(torch.nn.Module):
    """Linear 16 -> 32, relu, Linear 32 -> 8."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class ConvNet(torch.nn.Module):
    """conv2d + relu, add, linear over x [N, 3, 8, 8]: what the PT2E quantizers annotate."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.fc((y + y).flatten(1))


def convnet_inputs(generator: torch.Generator) -> tuple[torch.Tensor, ...]:
    return (torch.randn(2, 3, 8, 8, generator=generator),)


class TokenMLP(torch.nn.Module):
    """x [batch, tokens, 16] -> the same shape; both leading dimensions dynamic (``token_dims``)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))) + x


def token_dims():
    """batch <= 4 and tokens <= 8: the dynamic_shapes of TokenMLP's input."""
    return ({0: torch.export.Dim("batch", max=4), 1: torch.export.Dim("tokens", max=8)},)


def small_convnet_tokens(atol: float = 1e-5) -> tuple[SampleModel, ...]:
    """The samples 'small' (the primary), 'convnet' (with more calibration inputs) and 'tokens' (dynamic);
    ``atol`` for a backend whose samples are quantized (``quantized.every_sample``): a step or two of the output."""
    return (
        SampleModel("small", lambda: (Small(), (torch.randn(2, 8),)), atol=atol),
        SampleModel(
            "convnet", lambda: (ConvNet(), (torch.randn(2, 3, 8, 8),)), make_inputs=convnet_inputs, atol=atol
        ),
        SampleModel("tokens", lambda: (TokenMLP(), (torch.randn(2, 6, 16),)), atol=atol),
    )
