"""Ahead-of-time checks: partitioner, backend id, tags, preprocess."""

from __future__ import annotations

from conformance.context import Context
from conformance.registry import CheckFailed, check, ensure


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


@check("AOT-1", "C-AOT-1", "make_partitioners() returns executorch Partitioner instances")
def partitioner_is_partitioner(ctx: Context) -> None:
    from executorch.exir.backend.partitioner import Partitioner

    for p in ctx.partitioners():
        ensure(
            isinstance(p, Partitioner),
            f"{type(p).__module__}.{type(p).__qualname__} is not a subclass of "
            "executorch.exir.backend.partitioner.Partitioner",
        )


@check("AOT-2", "C-AOT-2", "DelegationSpec.backend_id names exactly one importable BackendDetails subclass")
def backend_id_resolves(ctx: Context) -> None:
    from executorch.exir.backend.backend_details import BackendDetails

    ids = {spec[0] for r in ctx.partition_records(ctx.primary) for spec in r.tags.values()}
    ensure(bool(ids), f"the partitioners delegated nothing of sample model {ctx.primary!r}")
    classes = _subclasses(BackendDetails)
    for backend_id in sorted(ids):
        matches = [c for c in classes if c.__name__ == backend_id]
        ensure(
            bool(matches),
            f"DelegationSpec.backend_id {backend_id!r} names no BackendDetails subclass; ExecuTorch "
            "finds the preprocess class by its __name__, so the class must be named exactly like the id "
            "and its module imported before lowering",
        )
        ensure(
            len(matches) == 1,
            f"backend id {backend_id!r} matches {len(matches)} BackendDetails subclasses "
            f"({', '.join(c.__module__ + '.' + c.__qualname__ for c in matches)}); which one ExecuTorch uses "
            "is not defined (1.5.1 takes the first in one code path and the last in another)",
        )
    ensure(
        ids == {ctx.descriptor.backend_id},
        f"the partitioners delegate to {sorted(ids)}, the descriptor declares {ctx.descriptor.backend_id!r}",
    )


@check("AOT-3", "C-AOT-3", "partition tags are consistent with the returned DelegationSpecs")
def tags_consistent(ctx: Context) -> None:
    for name in ctx.delegated_samples():
        for r in ctx.partition_records(name):
            unknown = r.node_tags - set(r.tags)
            ensure(not unknown, f"{r.partitioner} tagged nodes with {sorted(unknown)}, which partition_tags lacks")
            unused = set(r.tags) - r.node_tags
            ensure(not unused, f"{r.partitioner} returned partition_tags {sorted(unused)} that no node carries")


@check("AOT-4", "C-AOT-4", "only operators the backend declares are delegated")
def claims_only_supported(ctx: Context) -> None:
    supported = ctx.descriptor.supported_ops
    for name in [m.name for m in ctx.descriptor.sample_models]:
        for r in ctx.partition_records(name):
            extra = sorted({op for _, op, _ in r.tagged_ops if op not in supported})
            ensure(
                not extra,
                f"{r.partitioner} claimed {', '.join(extra)} in sample model {name!r}, which the backend does "
                f"not declare in supported_ops; a partitioner must claim only what the runtime executes",
            )


@check("AOT-5", "C-AOT-5", "preprocess is deterministic: the same program gives the same bytes")
def preprocess_deterministic(ctx: Context) -> None:
    for name in ctx.delegated_samples():
        first = [d.data for d in ctx.backend_delegates(name)]
        from conformance.pte import read_pte

        again = read_pte(ctx.lower_fresh(name).pte)
        second = [d.data for d in again.delegates() if d.backend_id == ctx.descriptor.backend_id]
        ensure(len(first) == len(second), f"re-lowering {name!r} gave {len(second)} blobs instead of {len(first)}")
        for i, (a, b) in enumerate(zip(first, second)):
            if a != b:
                at = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
                raise CheckFailed(
                    f"preprocess is not deterministic: blob {i} of {name!r} differs between two lowerings of "
                    f"the same program (sizes {len(a)} and {len(b)}, first difference at byte {at})"
                )


@check("AOT-6", "C-AOT-6", "the partitioner's compile specs are stored with each delegate in the .pte")
def compile_specs_reach_pte(ctx: Context) -> None:
    for name in ctx.delegated_samples():
        wanted = sorted({spec[1] for r in ctx.partition_records(name) for spec in r.tags.values()})
        stored = sorted({d.compile_specs for d in ctx.backend_delegates(name)})
        ensure(
            stored == wanted,
            f"sample {name!r}: DelegationSpec compile specs {wanted} but the .pte stores {stored}",
        )
