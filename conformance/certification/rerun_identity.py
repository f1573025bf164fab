"""``verify --rerun`` re-runs the backend the report describes, or refuses (docs/certification.md,
"Verify a report").

A report's ``options.backend`` is only the name its run was started with: a report of a made-up backend
whose options name another, installed backend would otherwise be "confirmed" by a re-run of that other
backend. So before anything runs, the backend that name loads here is described in a vendor process (its
module is never imported in this one) and its identity is held to the report's ``backend`` section: id,
distribution, declared version, installed version, and the SHA-256 of every runtime library.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

#: The longest loading the descriptor may take here (a vendor's module that hangs is bad input, not a hang).
DESCRIBE_TIMEOUT_S = 300.0


def installed_backend(spec: str, timeout: float = DESCRIBE_TIMEOUT_S) -> dict[str, Any]:
    """The ``backend`` section a run of ``spec`` would write here: id, distribution, version,
    installed_version and runtime_libraries (path, sha256). DescriptorError if it cannot be loaded."""
    from conformance.report.building import runtime_libraries
    from conformance.vendor.process import VendorProcess
    from conformance.vendor.remote_descriptor import describe
    from conformance.version_numbers import installed_version

    with tempfile.TemporaryDirectory(prefix="conformance-rerun-identity-") as tmp:
        vendor = VendorProcess(spec, Path(tmp), Path(tmp) / "vendor-process.log")
        try:
            descriptor, _ = describe(spec, vendor, timeout)
        finally:
            vendor.close()
    return {
        "id": descriptor.backend_id,
        "distribution": descriptor.distribution,
        "version": descriptor.version,
        "installed_version": installed_version(descriptor.distribution),
        "runtime_libraries": runtime_libraries(descriptor),
    }


def _short(sha: Any) -> str:
    return f"{sha[:16]}…" if isinstance(sha, str) else "unreadable"


def _libraries(section: dict[str, Any]) -> dict[str, str]:
    """sha256 -> file name of each library with a hash (paths differ between machines; contents do not)."""
    return {
        lib["sha256"]: Path(str(lib.get("path"))).name
        for lib in section.get("runtime_libraries") or []
        if isinstance(lib, dict) and isinstance(lib.get("sha256"), str)
    }


def identity_problems(reported: dict[str, Any], here: dict[str, Any], spec: str) -> list[str]:
    """One line per way the backend ``spec`` loads here (``here``) is not the one the report describes."""
    problems = []
    for key, what in (
        ("id", "backend id"),
        ("distribution", "distribution"),
        ("version", "declared version"),
    ):
        if reported.get(key) != here.get(key):
            problems.append(
                f"{what}: the report describes {reported.get(key)!r}, {spec!r} here is {here.get(key)!r}"
            )
    old, new = reported.get("installed_version"), here.get("installed_version")
    if old is not None and old != new:
        problems.append(f"installed version: the report tested {old!r}, installed here: {new!r}")
    tested, installed = _libraries(reported), _libraries(here)
    for sha, name in tested.items():
        if sha not in installed:
            problems.append(
                f"runtime library {name} (SHA-256 {_short(sha)}) the report tested is not installed here"
            )
    for sha, name in installed.items():
        if sha not in tested:
            problems.append(
                f"runtime library {name} (SHA-256 {_short(sha)}) here is not one the report tested"
            )
    unread = [lib for lib in here.get("runtime_libraries") or [] if lib.get("sha256") is None]
    for lib in unread:
        problems.append(f"runtime library {lib.get('path')} here cannot be hashed: {lib.get('error')}")
    return problems
