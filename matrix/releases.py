"""The ExecuTorch releases of the matrix and what each needs (measured: see matrix/results/ and abi_checks/baselines/)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Release:
    executorch: str
    torch: str  # the torch the matrix installs with it
    #: For a wheel without C++ headers: the later release whose headers the
    #: runtime library is built against (an ABI experiment; see grid.json).
    headers_from: str | None = None
    #: Extra packages the release needs to lower (1.3.1 calls flatc).
    extra: tuple[str, ...] = ()
    #: Known limits of the reference backend on this release: check pattern -> reason.
    expected_failures: tuple[tuple[str, str], ...] = ()


#: The nearest later release whose wheel ships include/.
_FIRST_WITH_HEADERS = "1.3.1"
_NO_TENSOR_LAYOUT = (
    "the reference backend's named data needs executorch.exir.tensor_layout, added in executorch 1.1"
)

RELEASES = (
    Release(
        "1.0.1",
        "2.9.1",
        headers_from=_FIRST_WITH_HEADERS,
        expected_failures=(("NDATA-1", _NO_TENSOR_LAYOUT), ("NDATA-2", _NO_TENSOR_LAYOUT)),
    ),
    Release("1.1.0", "2.10.0", headers_from=_FIRST_WITH_HEADERS),
    Release("1.2.0", "2.11.0", headers_from=_FIRST_WITH_HEADERS),
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
