"""Blob checks: every processed blob starts with the contract header."""

from __future__ import annotations

from conformance.context import Context
from conformance.inspection.blob_header import HeaderError, read_header
from conformance.outcomes import CheckFailed, ensure
from conformance.registry import check
from conformance.version_numbers import version_triple


def headers(ctx: Context):
    """(sample name, delegate index, header) for every blob of the backend."""
    for name in ctx.delegated_samples():
        delegates = ctx.backend_delegates(name)
        ensure(bool(delegates), f"sample model {name!r} has no {ctx.descriptor.backend_id} delegate")
        for i, d in enumerate(delegates):
            try:
                yield name, i, read_header(d.data)
            except HeaderError as exc:
                raise CheckFailed(
                    f"blob {i} of sample {name!r} does not start with a valid contract header: {exc} "
                    f"(first bytes {d.data[:8]!r})"
                ) from None


@check("BLOB-1", "C-BLOB-1", "every processed blob starts with a valid contract version header")
def header_present(ctx: Context) -> None:
    for _ in headers(ctx):
        pass


@check("BLOB-2", "C-BLOB-2", "the header's backend id and versions match the backend and the exporter")
def header_identity(ctx: Context) -> None:
    executorch_version = ctx.executorch_version()
    try:
        want_backend = version_triple(ctx.descriptor.version)
    except HeaderError as exc:
        raise CheckFailed(f"the backend's version cannot be written in a blob header: {exc}") from None
    want_et = version_triple(executorch_version)
    for name, i, h in headers(ctx):
        where = f"blob {i} of sample {name!r}"
        ensure(
            h.backend_id == ctx.descriptor.backend_id,
            f"{where}: header backend id {h.backend_id!r}, expected {ctx.descriptor.backend_id!r}",
        )
        ensure(
            h.backend_version == want_backend,
            f"{where}: header backend version {'.'.join(map(str, h.backend_version))}, "
            f"the backend is {ctx.descriptor.version}",
        )
        ensure(
            h.executorch_version == want_et,
            f"{where}: header executorch version {'.'.join(map(str, h.executorch_version))}, "
            f"exported with executorch {executorch_version}",
        )
