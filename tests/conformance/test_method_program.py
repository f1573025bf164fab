"""The method checks' program (conformance/vendor/method_tasks.py), made of a sample in this process: which
form a sample gets, that both methods use the one module's parameters, a clear error for a sample it
cannot wrap; how MTH-2 judges the measured sizes; and the reference backend's verdicts in the shared
certify run."""

from __future__ import annotations

import pytest
import torch
from sample_modules import FixedBatch, Scalar

from conformance.checks.methods import stored_once
from conformance.outcomes import CheckFailed
from conformance.vendor import method_tasks
from conformance.vendor.envelope import VendorError


class _Linear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


def _parameters(program) -> dict[str, torch.Tensor]:
    return {name: program.state_dict[name] for name in program.graph_signature.parameters}


def test_prefill_takes_the_sequence_and_decode_one_row_of_the_same_module():
    torch.manual_seed(0)
    sample, inputs = _Linear().eval(), (torch.randn(5, 4),)
    form, rounds, programs = method_tasks.exported("linear", sample, inputs, None)
    assert form == method_tasks.SEQUENCE_AND_ROW
    assert [tuple(args[0].shape) for args in rounds["prefill"]] == [(5, 4)] * method_tasks.ROUNDS
    assert [tuple(args[0].shape) for args in rounds["decode"]] == [(1, 4)] * method_tasks.ROUNDS
    # Every call has inputs of its own: the methods and rounds cannot be told apart by a stale output.
    calls = [args[0] for m in method_tasks.METHODS for args in rounds[m]]
    assert all(not torch.equal(a[:1], b[:1]) for i, a in enumerate(calls) for b in calls[i + 1 :])
    # Both methods hold the one module's parameter tensors (the same storage), under the same names.
    prefill, decode = (_parameters(programs[m]) for m in method_tasks.METHODS)
    assert sorted(prefill) == sorted(decode) == ["fc.bias", "fc.weight"]
    assert all(
        prefill[n].data_ptr() == decode[n].data_ptr() == getattr(sample.fc, n[3:]).data_ptr() for n in prefill
    )


def test_a_sample_that_takes_no_single_row_runs_both_methods_on_its_shapes():
    torch.manual_seed(0)
    form, rounds, _programs = method_tasks.exported("fixed", FixedBatch(), (torch.randn(3, 4),), None)
    assert form == method_tasks.SAME_SHAPES
    assert {tuple(args[0].shape) for m in method_tasks.METHODS for args in rounds[m]} == {(3, 4)}


def test_make_inputs_gives_each_method_its_own_seeded_inputs():
    calls = []

    def make_inputs(generator):
        calls.append(generator.initial_seed())
        return (torch.randn(2, 4, generator=generator),)

    rounds = method_tasks.method_inputs(
        "linear", make_inputs, (torch.randn(2, 4),), method_tasks.SEQUENCE_AND_ROW
    )
    assert calls == [1] * method_tasks.ROUNDS + [2] * method_tasks.ROUNDS
    again = method_tasks.method_inputs(
        "linear", make_inputs, (torch.randn(2, 4),), method_tasks.SEQUENCE_AND_ROW
    )
    assert all(torch.equal(a[0], b[0]) for m in method_tasks.METHODS for a, b in zip(rounds[m], again[m]))
    assert tuple(rounds["decode"][0][0].shape) == (1, 4)


def test_other_weights_have_as_many_bytes_and_other_values():
    sample = _Linear()
    other = method_tasks.with_other_weights("linear", sample)
    assert method_tasks.parameter_bytes(other) == method_tasks.parameter_bytes(sample) == (12 + 3) * 4
    assert (
        torch.equal(other.fc.weight, -sample.fc.weight)
        and other.fc.weight.data_ptr() != sample.fc.weight.data_ptr()
    )


def test_a_sample_with_a_non_tensor_input_is_refused_by_name():
    with pytest.raises(VendorError, match=r"sample model 'scalar' has an input that is not a tensor"):
        method_tasks.exported("scalar", Scalar(), (torch.randn(2), 3), None)


def _flow(shared: int, single: int, apart: int, data: int = 0) -> dict:
    size = lambda total: {"pte": total - data, "data": data}  # noqa: E731
    return {
        "sizes": {"shared": size(shared), "single": size(single), "apart": size(apart)},
        "methods": ["prefill", "decode"],
        "sample": "large_mlp",
        "parameter_bytes": 329_984,
    }


def test_weights_stored_once_pass_and_stored_twice_fail_with_the_sizes():
    # One method with its own weights adds 334_000 bytes; sharing the module saved 331_000 of them.
    assert "sharing the module saved 331000 of the 334000 bytes" in stored_once(
        _flow(shared=339_000, single=336_000, apart=670_000, data=330_000)
    )
    with pytest.raises(CheckFailed) as failed:
        stored_once(_flow(shared=669_500, single=336_000, apart=670_000))
    message = str(failed.value)
    assert message.startswith("the weights 'prefill' and 'decode' share are stored twice")
    assert "is 669500 bytes; the single-method program ('decode' alone) is 336000 bytes" in message
    assert "other weights 670000 bytes; sharing the module saved 500 bytes of the 334000" in message


def test_the_reference_backend_passes_both_method_checks(reference_certify_run):
    _code, report, output, _out = reference_certify_run
    assert report is not None, output
    results = {r["id"]: r for r in report["results"]}
    for check_id in ("MTH-1", "MTH-2"):
        assert results[check_id]["outcome"] == "passed", results[check_id]
    assert "matched eager PyTorch" in results["MTH-1"]["reason"]
    assert "sharing the module saved" in results["MTH-2"]["reason"]
