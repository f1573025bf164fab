"""Ahead-of-time checks: partitioner, backend id, tags, preprocess."""

from __future__ import annotations

from conformance.context import Context
from conformance.outcomes import CheckFailed, ensure
from conformance.registry import check


@check("AOT-1", "C-AOT-1", "make_partitioners() returns executorch Partitioner instances")
def partitioner_is_partitioner(ctx: Context) -> None:
    for qualname, is_partitioner in ctx.partitioner_types():
        ensure(
            is_partitioner,
            f"{qualname} is not a subclass of executorch.exir.backend.partitioner.Partitioner",
        )


@check("AOT-2", "C-AOT-2", "DelegationSpec.backend_id names exactly one importable BackendDetails subclass")
def backend_id_resolves(ctx: Context) -> str | None:
    lowering = ctx.lowering(ctx.primary)
    records = ctx.partition_records(ctx.primary)
    ids = {spec[0] for r in records for spec in r.tags.values()}
    ensure(bool(ids), f"the partitioners delegated nothing of sample model {ctx.primary!r}")
    for backend_id in sorted(ids):
        ensure(
            bool(lowering.backend_classes.get(backend_id)),
            f"DelegationSpec.backend_id {backend_id!r} names no BackendDetails subclass; ExecuTorch "
            "finds the preprocess class by its __name__, so the class must be named exactly like the id "
            "and its module imported before lowering",
        )
    own = ctx.descriptor.backend_id
    ensure(own in ids, f"the partitioners delegate to {sorted(ids)}, the descriptor declares {own!r}")
    matches = lowering.backend_classes[own]
    ensure(
        len(matches) == 1,
        f"backend id {own!r} matches {len(matches)} BackendDetails subclasses ({', '.join(matches)}); which one "
        "ExecuTorch uses is not defined (1.5.1 takes the first in one code path and the last in another)",
    )
    others = sorted(ids - {own})
    if others:
        return f"the partitioners also delegate to {', '.join(others)} (other backends are not judged here)"
    return None


@check("AOT-3", "C-AOT-3", "partition tags are consistent with the returned DelegationSpecs")
def tags_consistent(ctx: Context) -> None:
    for name in ctx.delegated_samples():
        for r in ctx.partition_records(name):
            unknown = r.node_tags - set(r.tags)
            ensure(
                not unknown,
                f"{r.partitioner} tagged nodes with {sorted(unknown)}, which partition_tags lacks",
            )
            unused = set(r.tags) - r.node_tags
            ensure(
                not unused, f"{r.partitioner} returned partition_tags {sorted(unused)} that no node carries"
            )


@check("AOT-4", "C-AOT-4", "only operators the backend declares are delegated")
def claims_only_supported(ctx: Context) -> str | None:
    declared = ctx.descriptor.operators
    own = ctx.descriptor.backend_id
    ignored: set[str] = set()
    for name in [m.name for m in ctx.descriptor.sample_models]:
        for r in ctx.partition_records(name):
            mine = {tag for tag, spec in r.tags.items() if spec[0] == own}
            extra = sorted({op for _, op, tag in r.tagged_ops if tag in mine and op not in declared})
            ensure(
                not extra,
                f"{r.partitioner} claimed {', '.join(extra)} in sample model {name!r}, which the backend does "
                f"not declare in its operators; a partitioner must claim only what the runtime executes",
            )
            ignored |= {target for _, target, tag in r.tagged_non_ops if tag in mine}
    if ignored:
        return f"ignored tagged nodes that are not operators: {', '.join(sorted(ignored))}"
    return None


def _differ(first: list[bytes], second: list[bytes], name: str, how: str) -> None:
    ensure(len(first) == len(second), f"{how} {name!r} gave {len(second)} blobs instead of {len(first)}")
    for i, (a, b) in enumerate(zip(first, second)):
        if a != b:
            at = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
            raise CheckFailed(
                f"preprocess is not deterministic: blob {i} of {name!r} differs between the first lowering and "
                f"{how} (sizes {len(a)} and {len(b)}, first difference at byte {at})"
            )


@check("AOT-5", "C-AOT-5", "preprocess is deterministic: the same program gives the same bytes")
def preprocess_deterministic(ctx: Context) -> None:
    own = ctx.descriptor.backend_id
    for name in ctx.delegated_samples():
        first = [d.data for d in ctx.backend_delegates(name)]
        again = [d.data for d in ctx.read(ctx.lower_fresh(name).pte_bytes).delegates() if d.backend_id == own]
        _differ(first, again, name, "a second lowering in the same process")
    # Process-dependent state (hash(str), addresses, pids) shows only across processes.
    sample = ctx.delegated_samples()[0] if ctx.delegated_samples() else None
    if sample is not None:
        first = [d.data for d in ctx.backend_delegates(sample)]
        fresh = [
            d.data
            for d in ctx.read(ctx.lower_in_new_process(sample).pte_bytes).delegates()
            if d.backend_id == own
        ]
        _differ(first, fresh, sample, "a lowering in a new process")


@check("AOT-6", "C-AOT-6", "the partitioner's compile specs are stored with each delegate in the .pte")
def compile_specs_reach_pte(ctx: Context) -> None:
    own = ctx.descriptor.backend_id
    for name in ctx.delegated_samples():
        wanted = sorted(
            {spec[1] for r in ctx.partition_records(name) for spec in r.tags.values() if spec[0] == own}
        )
        stored = sorted({d.compile_specs for d in ctx.backend_delegates(name)})
        ensure(
            stored == wanted,
            f"sample {name!r}: DelegationSpec compile specs {wanted} but the .pte stores {stored}",
        )
