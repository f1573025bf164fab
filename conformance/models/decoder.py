"""The LLM tier's model: a small decoder-only transformer written for the suite in plain ``torch.nn``.

The structure is that of the Llama family of language models: a token embedding, ``LAYERS`` pre-norm
blocks, each an RMSNorm, grouped-query attention with rotary position embeddings (RoPE) over a
static KV cache, a residual add, an RMSNorm, a SwiGLU MLP and a residual add; then a final RMSNorm
and an untied linear head giving the logits of the next token. Weights are random from a fixed seed
(the suite downloads nothing); widths are small so that it exports and lowers in well under a minute.

The KV cache is static, as in ExecuTorch's LLM flow: one registered buffer per layer for keys and
one for values, ``MAX_SEQ`` positions long, zeros at first. A call writes the keys and values of its
tokens at positions ``input_pos``, ``input_pos + 1``, ... in place (``index_copy_``: ExecuTorch keeps
the buffers as mutable data) and attends over the whole cache, a position seeing only itself and
earlier ones. The same ``forward(tokens, input_pos)`` is exported twice, as the two methods of the
program: ``prefill`` (``PROMPT`` tokens at position 0) and ``decode`` (one token at ``input_pos``);
both return the logits of their last token.

``greedy`` runs the decoding loop: prefill the prompt, take the most likely token, then ``STEPS - 1``
decode calls, each fed the token the previous call chose. ``full_logits`` computes the logits of a
whole sequence at once without touching the cache (the reference a cached decode must equal).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

#: The seed of the weights and of the prompt.
SEED = 20261207
VOCAB, DIM, LAYERS, HEADS, KV_HEADS, HIDDEN = 256, 64, 2, 4, 2, 128
#: Positions of the static cache, tokens of the prompt, tokens generated (one by prefill, the rest by decode).
MAX_SEQ, PROMPT, STEPS = 64, 8, 32
ROPE_THETA, NORM_EPS = 10000.0, 1e-5


class RMSNorm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + NORM_EPS) * self.weight


def rope_tables(head_dim: int, positions: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos, sin), each (positions, head_dim / 2): the rotation angles of each position and frequency."""
    freqs = 1.0 / ROPE_THETA ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(positions, dtype=torch.float32), freqs)
    return torch.cos(angles), torch.sin(angles)


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE on ``x`` (batch, heads, seq, head_dim): feature i of the first half and feature i of the second
    half are rotated together by the angles (seq, head_dim / 2)."""
    half = x.shape[-1] // 2
    first, second = x[..., :half], x[..., half:]
    return torch.cat((first * cos - second * sin, first * sin + second * cos), dim=-1)


class Attention(nn.Module):
    """Grouped-query attention: ``HEADS`` query heads share ``KV_HEADS`` key/value heads, cached statically."""

    k_cache: torch.Tensor
    v_cache: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        self.head_dim = DIM // HEADS
        self.wq = nn.Linear(DIM, HEADS * self.head_dim, bias=False)
        self.wk = nn.Linear(DIM, KV_HEADS * self.head_dim, bias=False)
        self.wv = nn.Linear(DIM, KV_HEADS * self.head_dim, bias=False)
        self.wo = nn.Linear(HEADS * self.head_dim, DIM, bias=False)
        self.register_buffer("k_cache", torch.zeros(1, KV_HEADS, MAX_SEQ, self.head_dim))
        self.register_buffer("v_cache", torch.zeros(1, KV_HEADS, MAX_SEQ, self.head_dim))

    def _heads(self, x: torch.Tensor, heads: int) -> torch.Tensor:
        return x.reshape(x.shape[0], x.shape[1], heads, self.head_dim).transpose(1, 2)

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Scaled dot-product attention of q (1, HEADS, S, d) over k, v (1, KV_HEADS, T, d); mask (S, T) True
        where a query may see a key. Query head h reads key/value head h // (HEADS / KV_HEADS): the queries
        of a group are stacked along the sequence, so no key or value is repeated."""
        b, _, s, d = q.shape
        group = HEADS // KV_HEADS
        grouped = q.reshape(b, KV_HEADS, group * s, d)
        scores = torch.matmul(grouped, k.transpose(-2, -1)) * self.head_dim**-0.5
        scores = scores.reshape(b, KV_HEADS, group, s, -1).masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1).reshape(b, KV_HEADS, group * s, -1)
        out = torch.matmul(weights, v).reshape(b, HEADS, s, d)
        return self.wo(out.transpose(1, 2).reshape(b, s, HEADS * d))

    def forward(
        self, x: torch.Tensor, positions: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
    ) -> torch.Tensor:
        q = rotate(self._heads(self.wq(x), HEADS), cos, sin)
        k = rotate(self._heads(self.wk(x), KV_HEADS), cos, sin)
        v = self._heads(self.wv(x), KV_HEADS)
        self.k_cache.index_copy_(2, positions, k)
        self.v_cache.index_copy_(2, positions, v)
        mask = torch.arange(MAX_SEQ)[None, :] <= positions[:, None]
        return self.attend(q, self.k_cache, self.v_cache, mask)

    def uncached(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        """The same attention over the sequence ``x`` alone, causal, without the cache."""
        q = rotate(self._heads(self.wq(x), HEADS), cos, sin)
        k = rotate(self._heads(self.wk(x), KV_HEADS), cos, sin)
        v = self._heads(self.wv(x), KV_HEADS)
        n = x.shape[1]
        mask = torch.arange(n)[None, :] <= torch.arange(n)[:, None]
        return self.attend(q, k, v, mask)


class SwiGLU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w1 = nn.Linear(DIM, HIDDEN, bias=False)
        self.w3 = nn.Linear(DIM, HIDDEN, bias=False)
        self.w2 = nn.Linear(HIDDEN, DIM, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attention_norm = RMSNorm(DIM)
        self.attention = Attention()
        self.ffn_norm = RMSNorm(DIM)
        self.feed_forward = SwiGLU()

    def forward(self, x: torch.Tensor, attend: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
        x = x + attend(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class Decoder(nn.Module):
    """The decoder (module docstring). ``forward(tokens (1, S) int64, input_pos (1,) int64)`` -> the logits
    of the last token, (1, VOCAB) float32, its keys and values written into the cache at input_pos onward."""

    rope_cos: torch.Tensor
    rope_sin: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = RMSNorm(DIM)
        self.output = nn.Linear(DIM, VOCAB, bias=False)
        cos, sin = rope_tables(DIM // HEADS, MAX_SEQ)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def forward(self, tokens: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        positions = input_pos + torch.arange(tokens.shape[1])
        cos, sin = self.rope_cos[positions], self.rope_sin[positions]
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x, lambda h, a=layer.attention: a(h, positions, cos, sin))
        return self.output(self.norm(x[:, -1, :]))

    def full_logits(self, tokens: torch.Tensor) -> torch.Tensor:
        """The logits (1, S, VOCAB) of every position of ``tokens`` (1, S), computed at once, causal, without
        reading or writing the cache."""
        cos, sin = self.rope_cos[: tokens.shape[1]], self.rope_sin[: tokens.shape[1]]
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x, lambda h, a=layer.attention: a.uncached(h, cos, sin))
        return self.output(self.norm(x))


def make() -> Decoder:
    """The decoder in eval mode, random weights from ``SEED`` (norm weights too, so none is an identity),
    the cache zeroed, nothing requiring grad (the cache is written in place): the same in every process."""
    torch.manual_seed(SEED)
    module = Decoder()
    generator = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(torch.rand(p.shape, generator=generator) * 0.5 + 0.75)
            elif p.dim() == 2:
                p.copy_(torch.randn(p.shape, generator=generator) * p.shape[-1] ** -0.5)
    return module.requires_grad_(False).eval()


def prompt() -> torch.Tensor:
    """The prompt, (1, PROMPT) int64 token ids from ``SEED``."""
    return torch.randint(0, VOCAB, (1, PROMPT), generator=torch.Generator().manual_seed(SEED + 1))


def example_inputs(method: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The example inputs each method is exported with: the prompt at 0 (prefill), one token at PROMPT
    (decode)."""
    if method == "prefill":
        return prompt(), torch.tensor([0])
    return torch.tensor([[0]]), torch.tensor([PROMPT])


@dataclasses.dataclass
class Generation:
    """What one greedy run gave: the tokens chosen (``STEPS``), the logits each step chose from (1, VOCAB),
    and the seconds each call took."""

    tokens: list[int] = dataclasses.field(default_factory=list)
    logits: list[torch.Tensor] = dataclasses.field(default_factory=list)
    seconds: list[float] = dataclasses.field(default_factory=list)


def greedy(
    prefill: Callable[[torch.Tensor, torch.Tensor], Any],
    decode: Callable[[torch.Tensor, torch.Tensor], Any],
    tokens: torch.Tensor,
    steps: int = STEPS,
    on_step: Callable[[int], None] | None = None,
    forced: list[int] | None = None,
) -> Generation:
    """Greedy decoding: ``prefill(tokens, [0])``, then ``steps - 1`` calls ``decode([[token]], [pos])``, each
    with the token the previous call's logits make most likely (argmax, the lowest id on a tie). A call
    may return the logits or a sequence holding them first. ``on_step(k)`` is called before step k.
    ``forced``: teacher forcing, decode call k is fed ``forced[k - 1]`` whatever the logits chose (the
    tokens are still each call's argmax): greedy decoding up to the first step whose token differs."""
    import time

    run = Generation()
    pos = tokens.shape[1]
    for k in range(steps):
        if on_step is not None:
            on_step(k)
        started = time.perf_counter()
        if k == 0:
            out = prefill(tokens, torch.tensor([0]))
        else:
            fed = run.tokens[-1] if forced is None else forced[k - 1]
            out = decode(torch.tensor([[fed]]), torch.tensor([pos + k - 1]))
        run.seconds.append(time.perf_counter() - started)
        logits = out[0] if isinstance(out, (list, tuple)) else out
        run.logits.append(logits.detach().clone())
        run.tokens.append(int(torch.argmax(logits[0])))
    return run
