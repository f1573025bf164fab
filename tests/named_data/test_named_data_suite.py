"""The suite's NDATA checks: the reference backend passes them, a backend
without named data finds them not applicable, and each defect is caught by
the check that guards it, with a message naming it. Checks run in-process on
a Context, the way the pytest plugin runs them."""

from __future__ import annotations

import dataclasses

import pytest

from conformance.checks import all_checks
from conformance.context import Context
from conformance.descriptor import DescriptorError, _validate
from conformance.outcomes import CheckFailed, NotApplicable
from reference_backend.conformance import DESCRIPTOR
from reference_backend.partitioner import ReferencePartitioner

# The full tier (CI; bash scripts/test.sh --full): NDATA runs of broken named-data backends (the shared reference run covers NDATA)
pytestmark = pytest.mark.full

NDATA = ["NDATA-1", "NDATA-2", "NDATA-3", "NDATA-4"]


def run(ctx: Context, check_id: str) -> None:
    ctx.start_check(check_id)
    {c.id: c for c in all_checks()}[check_id].run(ctx)


def with_named_data(**changes):
    return dataclasses.replace(DESCRIPTOR, named_data=dataclasses.replace(DESCRIPTOR.named_data, **changes))


@pytest.fixture(scope="module")
def reference():
    ctx = Context(DESCRIPTOR)
    yield ctx
    ctx.close()


def test_checks_are_registered_as_must_with_their_clauses():
    checks = {c.id: c for c in all_checks()}
    for check_id in NDATA:
        assert checks[check_id].clause == "C-" + check_id
        assert checks[check_id].mandatory
    ids = [c.id for c in all_checks()]
    assert ids[ids.index("RT-1") :].index("NDATA-1") > 0 and ids[ids.index("NDATA-1") :][:4] == NDATA
    assert ids[-1].startswith("PKG-")  # after the runtime checks, before packaging


@pytest.mark.parametrize("check_id", NDATA)
def test_reference_backend_passes(reference, check_id):
    run(reference, check_id)


def test_lowering_writes_a_small_pte_and_one_ptd(reference):
    lowered = reference.named_data_lowered()
    assert list(lowered.data_files) == ["reference_weights.ptd"]
    weights = lowered.data_files["reference_weights.ptd"].stat().st_size
    assert weights > 320 * 1024 and len(lowered.pte) < 16 * 1024


@pytest.mark.parametrize("check_id", NDATA)
def test_not_applicable_without_named_data(check_id):
    ctx = Context(dataclasses.replace(DESCRIPTOR, named_data=None))
    with pytest.raises(NotApplicable, match=r"declares no named data support \(named_data is None\)"):
        run(ctx, check_id)


def test_blob_over_the_declared_size_is_caught():
    ctx = Context(with_named_data(max_blob_bytes=256))
    with pytest.raises(
        CheckFailed,
        match=r"blob 0 of named-data sample 'large_mlp' has \d+ bytes, more than the "
        r"declared max_blob_bytes 256",
    ):
        run(ctx, "NDATA-2")


def test_partitioners_that_write_no_ptd_are_caught():
    ctx = Context(with_named_data(make_partitioners=lambda: [ReferencePartitioner()]))
    with pytest.raises(CheckFailed, match=r"wrote no \.ptd file"):
        run(ctx, "NDATA-1")
    with pytest.raises(CheckFailed, match="more than the declared max_blob_bytes"):
        run(ctx, "NDATA-2")  # the weights stayed in the blob


def test_a_key_missing_from_the_ptd_is_named():
    def required(blob):
        return [*DESCRIPTOR.named_data.required_keys(blob), ("fc9.weight@0000", "reference_weights.ptd")]

    ctx = Context(with_named_data(required_keys=required))
    with pytest.raises(
        CheckFailed,
        match=r"needs named data 'fc9.weight@0000' from 'reference_weights.ptd', "
        r"which lacks it",
    ):
        run(ctx, "NDATA-1")


def _swap(ctx: Context, **changes) -> None:
    """Makes the context's named-data lowering return something else."""
    lowered = dataclasses.replace(ctx.named_data_lowered(), **changes)
    ctx.named_data_lowered = lambda: lowered


def test_a_program_that_runs_without_its_ptd_is_caught():
    """A backend that leaves the weights in its blob but also writes a .ptd."""
    ctx = Context(DESCRIPTOR)
    inline = ctx.pte("large_mlp")  # lowered with the ordinary partitioners: weights inside
    path = ctx.scratch_dir() / "inline.pte"
    path.write_bytes(inline)
    _swap(ctx, pte=inline, pte_path=path)
    run(ctx, "NDATA-3")  # it does run with the .ptd ...
    with pytest.raises(
        CheckFailed, match=r"loaded and ran without reference_weights.ptd and returned 1 outputs"
    ):
        run(ctx, "NDATA-4")  # ... and without it


def _perturbed(make):
    def perturbed():
        import torch

        module, inputs = make()
        with torch.no_grad():
            module.fc1.weight.add_(1.0)
        return module, inputs

    return perturbed


def test_a_ptd_of_other_weights_is_caught(tmp_path):
    """The .ptd written for another export of the model (other weights)."""
    ctx = Context(DESCRIPTOR)
    ctx.named_data_lowered()
    samples = tuple(
        dataclasses.replace(m, make=_perturbed(m.make)) if m.name == "large_mlp" else m
        for m in DESCRIPTOR.sample_models
    )
    other = Context(dataclasses.replace(DESCRIPTOR, sample_models=samples))
    foreign = other.named_data_lowered().data_files["reference_weights.ptd"]
    _swap(ctx, data_files={"reference_weights.ptd": foreign})
    # The reason carries the runtime's own log line, not only the error code.
    with pytest.raises(
        CheckFailed,
        match=r"load of named-data sample 'large_mlp' with reference_weights.ptd failed: "
        r".*0x:?24; the runtime logged: .*is missing from the data loaded for "
        r"'reference_weights.ptd'",
    ):
        run(ctx, "NDATA-3")
    ctx.close()
    other.close()


def test_descriptor_validation():
    with pytest.raises(DescriptorError, match=r"named_data\.sample 'nope' is not one of the sample_models"):
        _validate(with_named_data(sample="nope"), "x")
    with pytest.raises(DescriptorError, match="max_blob_bytes must be positive"):
        _validate(with_named_data(max_blob_bytes=0), "x")
    assert _validate(DESCRIPTOR, "x") is DESCRIPTOR
