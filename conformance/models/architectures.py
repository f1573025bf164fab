"""Small versions of standard architectures, written for this suite in plain ``torch.nn``.

torchvision and torchaudio have no build for this project's torch (2.13.0), and the suite
downloads nothing, so each architecture here is a scaled-down but structurally faithful
definition of a standard one, with random weights from a fixed seed:

- ``resnet``: a ResNet of basic blocks (He et al. 2015): a 3x3 stem, two stages of two basic
  blocks each (3x3 conv, batch norm, ReLU, 3x3 conv, batch norm, residual add, ReLU), the second
  stage downsampling with stride 2 and a 1x1 projection shortcut, global average pooling, a
  linear classifier.
- ``mobilenet_v2``: MobileNetV2 (Sandler et al. 2018): a strided 3x3 stem, inverted residual
  blocks (1x1 expansion, 3x3 depthwise, 1x1 linear projection; batch norm after each, ReLU6
  after the first two; a residual add where stride is 1 and the widths agree), a 1x1 head,
  global average pooling, a linear classifier.
- ``vit``: a Vision Transformer encoder (Dosovitskiy et al. 2020): a strided patch-embedding
  convolution, a class token and learned position embeddings, two pre-norm encoder blocks
  (layer norm, multi-head scaled dot-product self-attention written out as matrix products and a
  softmax, residual add, layer norm, a GELU MLP, residual add), a final layer norm and a linear
  head on the class token.
- ``m5``: the M5 raw-waveform audio classifier (Dai et al. 2017): a wide strided first 1-D
  convolution, four conv-batch-norm-ReLU-max-pool stages, global average pooling over time, a
  linear classifier and log-softmax.
- ``llm``: a decoder-only language model of the Llama family (``conformance.models.decoder``: RMSNorm,
  RoPE, grouped-query attention over a static KV cache, SwiGLU), run by greedy decoding with a
  ``prefill`` and a ``decode`` method (``conformance.models.llm_runner``), not by ``make()``.
- ``llm_quantized``: the same decoder quantized with the backend's own PT2E quantizer, where the descriptor
  declares one (``conformance.models.llm_runner``). For a backend that takes only quantized programs
  (``quantized.every_sample``) the ``llm`` row is already that decoder, and this row is not run.

The widths and inputs are small so that each model exports, lowers and runs in about a second.
Batch norms get random running statistics and affine weights, so that none is an identity.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from conformance.models import decoder

#: The seed of every model's weights and inputs.
SEED = 20261201


def _randomize_norms(module: nn.Module, generator: torch.Generator) -> None:
    """Random running statistics and affine parameters for every batch norm (a fresh one is an identity
    in eval mode, which would hide a backend that drops it)."""
    for m in module.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            n = m.num_features
            assert m.running_mean is not None and m.running_var is not None  # track_running_stats
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(n, generator=generator) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=generator) * 0.5 + 0.75)
                m.weight.copy_(torch.rand(n, generator=generator) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(n, generator=generator) * 0.1)


# --------------------------------------------------------------------------- ResNet (basic blocks)


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, widths: tuple[int, ...] = (16, 32), blocks: int = 2, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, widths[0], 3, padding=1, bias=False), nn.BatchNorm2d(widths[0])
        )
        layers: list[nn.Module] = []
        cin = widths[0]
        for stage, width in enumerate(widths):
            for b in range(blocks):
                layers.append(BasicBlock(cin, width, 2 if stage > 0 and b == 0 else 1))
                cin = width
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.layers(torch.relu(self.stem(x)))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


# --------------------------------------------------------------------------- MobileNetV2


def _conv_bn(
    cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1, act: bool = True
) -> nn.Sequential:
    parts: list[nn.Module] = [
        nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    ]
    if act:
        parts.append(nn.ReLU6())
    return nn.Sequential(*parts)


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
        super().__init__()
        hidden = cin * expand
        self.residual = stride == 1 and cin == cout
        parts: list[nn.Module] = [_conv_bn(cin, hidden, 1)] if expand != 1 else []
        parts += [_conv_bn(hidden, hidden, 3, stride, groups=hidden), _conv_bn(hidden, cout, 1, act=False)]
        self.body = nn.Sequential(*parts)

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    #: (expansion, width, repeats, first stride), as in the paper's table 2, narrowed and shortened
    SETTINGS = ((1, 8, 1, 1), (4, 12, 2, 2), (4, 16, 2, 2))

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        blocks: list[nn.Module] = [_conv_bn(3, 8, 3, stride=2)]
        cin = 8
        for expand, width, repeats, stride in self.SETTINGS:
            for r in range(repeats):
                blocks.append(InvertedResidual(cin, width, stride if r == 0 else 1, expand))
                cin = width
        blocks.append(_conv_bn(cin, 32, 1))
        self.features = nn.Sequential(*blocks)
        self.classifier = nn.Linear(32, classes)

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


# --------------------------------------------------------------------------- Vision Transformer


class SelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        weights = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * self.head_dim**-0.5, dim=-1)
        return self.proj(torch.matmul(weights, v).transpose(1, 2).reshape(b, n, d))


class EncoderBlock(nn.Module):
    def __init__(self, dim: int, heads: int, mlp: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp), nn.GELU(), nn.Linear(mlp, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class VisionTransformer(nn.Module):
    def __init__(
        self,
        image: int = 32,
        patch: int = 8,
        dim: int = 32,
        depth: int = 2,
        heads: int = 4,
        classes: int = 10,
    ) -> None:
        super().__init__()
        tokens = (image // patch) ** 2
        self.embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, tokens + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*(EncoderBlock(dim, heads, 2 * dim) for _ in range(depth)))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


# --------------------------------------------------------------------------- M5 (raw audio)


class M5(nn.Module):
    def __init__(self, width: int = 16, classes: int = 10) -> None:
        super().__init__()
        stages: list[nn.Module] = []
        cin = 1
        for cout, kernel, stride in ((width, 80, 4), (width, 3, 1), (2 * width, 3, 1), (2 * width, 3, 1)):
            stages += [
                nn.Conv1d(cin, cout, kernel, stride=stride),
                nn.BatchNorm1d(cout),
                nn.ReLU(),
                nn.MaxPool1d(4),
            ]
            cin = cout
        self.features = nn.Sequential(*stages)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.features(x).mean(dim=-1)
        return torch.log_softmax(self.fc(x), dim=-1)


# --------------------------------------------------------------------------- the table


@dataclasses.dataclass(frozen=True)
class StandardModel:
    """One architecture of the model tier: how to build it (random weights from ``SEED``) and its input."""

    name: str
    family: str
    what: str
    build: Callable[[], nn.Module] = dataclasses.field(repr=False, compare=False)
    inputs: tuple[tuple[int, ...], ...] = ()
    #: outputs must be within atol + rtol * |expected| of eager PyTorch, atol relative to max |expected|
    rtol: float = 1e-4
    atol: float = 1e-4

    def make(self) -> tuple[nn.Module, list[Any]]:
        """(module in eval mode, inputs), the same in every process."""
        generator = torch.Generator().manual_seed(SEED)
        torch.manual_seed(SEED)
        module = self.build()
        _randomize_norms(module, generator)
        return module.eval(), [torch.randn(shape, generator=generator) for shape in self.inputs]


MODELS: dict[str, StandardModel] = {
    m.name: m
    for m in (
        StandardModel(
            "resnet",
            "ResNet (basic blocks)",
            "4 basic blocks, widths 16 and 32, 1x1 projection shortcut, 32x32 image",
            ResNet,
            ((1, 3, 32, 32),),
        ),
        StandardModel(
            "mobilenet_v2",
            "MobileNetV2",
            "5 inverted residual blocks (expand 1x1, depthwise 3x3, project 1x1, ReLU6), 32x32 image",
            MobileNetV2,
            ((1, 3, 32, 32),),
        ),
        StandardModel(
            "vit",
            "Vision Transformer",
            "8x8 patches, 17 tokens of width 32, 2 pre-norm encoder blocks with 4-head self-attention",
            VisionTransformer,
            ((1, 3, 32, 32),),
        ),
        StandardModel(
            "m5",
            "M5 (raw audio)",
            "1-D convolutions over 4000 samples (stride-4 first layer), batch norm, max pooling",
            M5,
            ((1, 1, 4000),),
        ),
        StandardModel(
            "llm",
            "decoder-only LLM",
            f"{decoder.LAYERS} Llama-style blocks of width {decoder.DIM} (RMSNorm, RoPE, {decoder.HEADS}-head "
            f"grouped-query attention over {decoder.KV_HEADS} KV heads and a static {decoder.MAX_SEQ}-position "
            f"KV cache, SwiGLU), vocabulary {decoder.VOCAB}; prefill of {decoder.PROMPT} tokens then greedy "
            f"decode to {decoder.STEPS} tokens",
            decoder.make,
            ((1, decoder.PROMPT),),
        ),
        StandardModel(
            "llm_quantized",
            "decoder-only LLM, quantized",
            "the llm decoder quantized with the backend's own quantizer (the descriptor's quantized), calibrated "
            "on the greedy decoding of the prompt, judged against the converted model",
            decoder.make,
            ((1, decoder.PROMPT),),
        ),
    )
}
