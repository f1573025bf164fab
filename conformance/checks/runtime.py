"""Runtime checks: registration, numerics, repeated use, refusing bad blobs."""

from __future__ import annotations

import re

from conformance.blob_header import HeaderError, read_header, with_blob_format
from conformance.context import Context
from conformance.fdcapture import capture_stderr
from conformance.forge import rename_backend, replace_delegate_data
from conformance.registry import CheckFailed, check, ensure


def _registry():
    from executorch.runtime import Runtime

    return Runtime.get().backend_registry


def _expected(ctx: Context, name: str, inputs):
    import torch

    module, _ = ctx.model(name)
    with torch.no_grad():
        out = module(*inputs)
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _compare(name: str, actual, expected, rtol: float, atol: float) -> None:
    import torch

    ensure(len(actual) == len(expected), f"sample {name!r}: {len(actual)} outputs, eager PyTorch gives {len(expected)}")
    for i, (a, e) in enumerate(zip(actual, expected)):
        ensure(tuple(a.shape) == tuple(e.shape), f"sample {name!r} output {i}: shape {tuple(a.shape)}, eager {tuple(e.shape)}")
        if not torch.allclose(a, e, rtol=rtol, atol=atol):
            diff = float((a - e).abs().max())
            raise CheckFailed(
                f"sample {name!r} output {i} differs from eager PyTorch: max abs difference {diff:.3g} "
                f"exceeds the declared tolerance (rtol={rtol}, atol={atol})"
            )


def load_error(pte: bytes, method: str = "forward", **load_kwargs) -> tuple[str | None, str]:
    """(the error loading ``method`` raised or None, what the runtime logged meanwhile)."""
    from executorch.runtime import Runtime

    error = None
    with capture_stderr() as log:
        try:
            Runtime.get().load_program(pte, **load_kwargs).load_method(method)
        except RuntimeError as exc:
            error = str(exc)
    return error, log[0]


@check("RT-1", "C-RT-1", "the runtime library registers under the backend id")
def registers(ctx: Context) -> None:
    ctx.require_runtime()
    names = _registry().registered_backend_names
    ensure(
        ctx.descriptor.backend_id in names,
        f"after load_runtime(), {ctx.descriptor.backend_id!r} is not among the registered backends {names}",
    )


@check("RT-2", "C-RT-2", "the registered backend reports is_available() true")
def is_available(ctx: Context) -> None:
    registers(ctx)
    ensure(_registry().is_available(ctx.descriptor.backend_id), f"{ctx.descriptor.backend_id}.is_available() is false")


@check("RT-3", "C-RT-3", "sample models match eager PyTorch within the declared tolerances")
def numerics(ctx: Context) -> None:
    ctx.require_runtime()
    for model in ctx.descriptor.sample_models:
        _, inputs = ctx.model(model.name)
        actual = ctx.run(ctx.pte(model.name), inputs)
        _compare(model.name, actual, _expected(ctx, model.name, inputs), model.rtol, model.atol)


@check("RT-4", "C-RT-4", "methods load and execute repeatedly, several at once")
def repeated_and_concurrent_methods(ctx: Context) -> None:
    import torch
    from executorch.runtime import Runtime

    ctx.require_runtime()
    names = [m.name for m in ctx.descriptor.sample_models]
    # Every sample loaded twice, all methods alive at the same time.
    methods = [(n, Runtime.get().load_program(ctx.pte(n)).load_method("forward")) for n in names for _ in range(2)]
    generator = torch.Generator().manual_seed(1)
    for round_ in range(3):
        for name, method in methods:
            _, example = ctx.model(name)
            inputs = tuple(
                torch.randn(x.shape, generator=generator, dtype=x.dtype) if x.is_floating_point() else x for x in example
            )
            model = ctx.descriptor.sample(name)
            try:
                actual = method.execute(list(inputs))
            except Exception as exc:
                raise CheckFailed(f"round {round_}: executing {name!r} again failed: {exc}") from exc
            _compare(name, actual, _expected(ctx, name, inputs), model.rtol, model.atol)


@check("RT-5", "C-RT-5", "a blob claiming an incompatible version is refused with DelegateInvalidCompatibility and a log line")
def refuses_incompatible_blob(ctx: Context) -> None:
    ctx.require_runtime()
    name = ctx.primary
    delegates = ctx.backend_delegates(name)
    ensure(bool(delegates), f"sample {name!r} has no delegate to forge")
    try:
        header = read_header(delegates[0].data)
    except HeaderError as exc:
        raise CheckFailed(f"cannot forge an incompatible blob: the blob has no contract header ({exc})") from None
    major, minor = header.blob_format[0] + 1, header.blob_format[1]
    forged = replace_delegate_data(ctx.pte(name), delegates[0], with_blob_format(delegates[0].data, major, minor))
    error, log_text = load_error(forged)
    ensure(
        error is not None,
        f"the runtime loaded a blob whose header claims blob format {major}.{minor} (the backend writes "
        f"{header.blob_format[0]}.{header.blob_format[1]}); it must refuse it with DelegateInvalidCompatibility",
    )
    ensure(
        re.search(r"0x:?30\b", error) is not None,
        f"loading a blob of format {major}.{minor} failed with {error!r}, expected error 0x30 "
        "(DelegateInvalidCompatibility)",
    )
    lines = [line for line in log_text.splitlines() if f"{major}.{minor}" in line and ctx.descriptor.version in line]
    ensure(
        bool(lines),
        f"no log line names both the blob's format {major}.{minor} and the runtime's version "
        f"{ctx.descriptor.version}; the log was: {log_text.strip()[-400:]!r}",
    )


@check("RT-6", "C-RT-6", "a program whose backend is not registered fails with NotFound naming the backend")
def unregistered_backend(ctx: Context) -> None:
    ctx.require_runtime()
    backend_id = ctx.descriptor.backend_id
    missing = backend_id[:-1] + ("~" if backend_id[-1] != "~" else "!")
    error, log_text = load_error(rename_backend(ctx.pte(ctx.primary), backend_id, missing))
    ensure(error is not None, f"a program naming the unregistered backend {missing!r} loaded anyway")
    ensure(re.search(r"0x:?20\b", error) is not None, f"expected error 0x20 (NotFound), got {error!r}")
    ensure(missing in log_text, f"the log does not name the missing backend {missing!r}: {log_text.strip()[-300:]!r}")
