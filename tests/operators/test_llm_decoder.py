"""The LLM tier's decoder in eager PyTorch (conformance/models/decoder.py): its shapes, that it is the same in
every process, that a decode over the cache equals a full recompute of the sequence, and that greedy decoding
depends on the cache (a decode that forgets it chooses other tokens)."""

from __future__ import annotations

import torch

from conformance.models import decoder


def test_shapes_and_methods():
    module = decoder.make()
    with torch.no_grad():
        prefill = module(*decoder.example_inputs("prefill"))
        decode = module(*decoder.example_inputs("decode"))
    assert prefill.shape == decode.shape == (1, decoder.VOCAB) and prefill.dtype == torch.float32
    cache = module.layers[0].attention.k_cache
    assert cache.shape == (1, decoder.KV_HEADS, decoder.MAX_SEQ, decoder.DIM // decoder.HEADS)
    # prefill wrote positions 0..PROMPT-1, decode position PROMPT; the rest is still zero
    written = cache[0, 0].abs().sum(-1) > 0
    assert written[: decoder.PROMPT + 1].all() and not written[decoder.PROMPT + 1 :].any()
    assert decoder.PROMPT + decoder.STEPS <= decoder.MAX_SEQ


def test_the_model_and_its_run_are_deterministic():
    a, b = decoder.make(), decoder.make()
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        assert torch.equal(x, y), name
    with torch.no_grad():
        first = decoder.greedy(a, a, decoder.prompt())
        second = decoder.greedy(b, b, decoder.prompt())
    assert first.tokens == second.tokens and len(first.tokens) == decoder.STEPS
    assert all(torch.equal(x, y) for x, y in zip(first.logits, second.logits))
    assert len(set(first.tokens)) > 4  # not a degenerate model that repeats one token


def test_a_cached_decode_equals_a_full_recompute():
    module = decoder.make()
    with torch.no_grad():
        run = decoder.greedy(module, module, decoder.prompt())
        sequence = torch.cat([decoder.prompt(), torch.tensor([run.tokens[:-1]])], dim=1)
        full = decoder.make().full_logits(sequence)
    # step k's logits are those of position PROMPT - 1 + k of the whole sequence
    for k, logits in enumerate(run.logits):
        expected = full[:, decoder.PROMPT - 1 + k]
        assert torch.allclose(logits, expected, rtol=1e-5, atol=1e-5), k
    # the choice is clear at every step: a backend's float32 rounding cannot flip a token
    margins = [float(torch.topk(x[0], 2).values.diff().abs()) for x in run.logits]
    assert min(margins) > 1e-3, margins


def test_a_decode_that_forgets_the_cache_chooses_other_tokens():
    module = decoder.make()

    def forgetful(tokens, input_pos):
        for layer in module.layers:
            layer.attention.k_cache.zero_()
            layer.attention.v_cache.zero_()
        return module(tokens, input_pos)

    with torch.no_grad():
        carried = decoder.greedy(module, module, decoder.prompt())
        module = decoder.make()
        dropped = decoder.greedy(module, forgetful, decoder.prompt())
    assert carried.tokens[0] == dropped.tokens[0]  # prefill alone
    assert carried.tokens != dropped.tokens
