"""The state checks' program (conformance/vendor/state_tasks.py), made of a sample in this process: which
form a sample gets, that each step depends on the earlier ones, and a clear error for a sample it
cannot wrap."""

from __future__ import annotations

import pytest
import torch
from sample_modules import FixedBatch, Scalar

from conformance.vendor import state_tasks
from conformance.vendor.envelope import VendorError


class _Batched(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * y


def _steps(name, sample, inputs, make_inputs=None):
    form, module, program = state_tasks.exported(name, sample, inputs, make_inputs)
    first = state_tasks.sequence(name, make_inputs, inputs, form, state_tasks.SEEDS[0], reverse=False)
    return form, module, program, first


def test_a_batched_sample_reads_its_inputs_stacked_in_buffers():
    torch.manual_seed(0)
    inputs = (torch.randn(3, 4), torch.randn(3, 4))
    form, module, program, first = _steps("pair", _Batched(), inputs)
    assert form == state_tasks.READ_BY_SAMPLE
    assert module.names == ["state_0", "state_1"]
    assert [tuple(getattr(module, n).shape) for n in module.names] == [(3 * state_tasks.STEPS, 4)] * 2
    # The exported program mutates both buffers (as ExecuTorch's lowering sees it, functionalized).
    signature = program.run_decompositions({}).graph_signature
    assert sorted(signature.buffers_to_mutate.values()) == ["state_0", "state_1"]
    # Each step's output depends on the earlier steps: with the state dropped, step 2 differs.
    carried = state_tasks.run_eager(state_tasks.make_program(_Batched(), inputs, form), first)
    dropped = state_tasks.run_eager(state_tasks.make_program(_Batched(), inputs, form), first[1:2])
    assert not torch.allclose(carried[1][0], dropped[0][0])
    # Row 0 of the output came from step 1's inputs (the rows of position 0).
    assert torch.allclose(carried[1][0][:3], torch.relu(first[0][0]) * first[0][1])


def test_a_sample_with_a_fixed_first_dimension_keeps_its_outputs_in_a_buffer():
    torch.manual_seed(0)
    inputs = (torch.randn(3, 4),)
    form, module, _program, first = _steps("fixed", FixedBatch(), inputs)
    assert form == state_tasks.OF_OUTPUTS
    assert tuple(module.state_0.shape) == (state_tasks.STEPS, 12)
    outs = state_tasks.run_eager(state_tasks.make_program(FixedBatch(), inputs, form), first)
    # Step k's output holds every earlier step's result in its rows, zeros after it.
    last = outs[2][0]
    assert torch.allclose(last[0], (torch.sigmoid(first[0][0].view(1, 12)) * 2).reshape(-1))
    assert torch.count_nonzero(last[3:]) == 0


def test_make_inputs_gives_the_step_inputs_when_declared():
    torch.manual_seed(0)
    inputs = (torch.randn(2, 4), torch.randn(2, 4))
    calls = []

    def make_inputs(generator):
        calls.append(generator)
        return (torch.randn(2, 4, generator=generator), torch.randn(2, 4, generator=generator))

    form, _, _, first = _steps("pair", _Batched(), inputs, make_inputs)
    again = state_tasks.sequence("pair", make_inputs, inputs, form, state_tasks.SEEDS[0], reverse=False)
    assert all(torch.equal(a, b) for s, t in zip(first, again) for a, b in zip(s, t))  # seeded
    assert not torch.equal(first[0][0], first[1][0])
    assert calls


def test_a_sample_with_a_non_tensor_input_is_a_clear_error():
    with pytest.raises(VendorError, match=r"sample model 'scalar' has an input that is not a tensor"):
        state_tasks.exported("scalar", Scalar(), (torch.randn(2, 2), 3), None)
