"""Serialization checks: what the .pte stores about the backend."""

from __future__ import annotations

from conformance.context import Context
from conformance.outcomes import ensure
from conformance.registry import check


@check("SER-1", "C-SER-1", "the .pte stores the backend id exactly")
def backend_id_stored(ctx: Context) -> None:
    own = ctx.descriptor.backend_id
    for name in ctx.delegated_samples():
        claimed = {spec[0] for r in ctx.partition_records(name) for spec in r.tags.values()}
        stored = sorted({d.backend_id for d in ctx.program(name).delegates()})
        ensure(
            own in stored,
            f"sample {name!r}: the .pte names backends {stored}, none of them exactly {own!r}",
        )
        stray = sorted(set(stored) - claimed)
        ensure(
            not stray,
            f"sample {name!r}: the .pte names backends {stray} that no partitioner delegated to "
            f"(delegated: {sorted(claimed)})",
        )


@check("SER-2", "C-SER-2", "each delegate's processed data is present in the .pte")
def delegate_data_present(ctx: Context) -> None:
    for model in ctx.descriptor.sample_models:
        delegates = ctx.backend_delegates(model.name)
        if model.delegated:
            ensure(
                bool(delegates), f"sample {model.name!r} is declared delegated but the .pte has no delegate"
            )
        for i, d in enumerate(delegates):
            ensure(len(d.data) > 0, f"sample {model.name!r}: delegate {i} has empty processed data")


@check("SER-3", "C-SER-3", "re-exporting the same model stores the same backend ids")
def reexport_same_id(ctx: Context) -> None:
    name = ctx.primary
    first = [d.backend_id for d in ctx.program(name).delegates()]
    second = [d.backend_id for d in ctx.read(ctx.lower_fresh(name).pte_bytes).delegates()]
    ensure(first == second, f"sample {name!r}: first export stored {first}, a re-export stored {second}")
