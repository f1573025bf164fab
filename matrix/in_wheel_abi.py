"""The backend libraries that ship inside the executorch wheels, judged by ``abi check`` against
every release: matrix/results/in_wheel_abi.json.

    python -m matrix.in_wheel_abi [--wheel-dir build/wheels] [--out matrix/results/in_wheel_abi.json]

Binaries this project did not build: XNNPACK, OpenVINO and QNN as the executorch 1.3.1-1.5.1
wheels carry them (1.5: ``lib/libexecutorch_backend_*.so``; 1.3/1.4: QNN in
``backends/qualcomm/libqnn_executorch_backend.so``, which also holds the registry, and XNNPACK
linked into the runtime extension; no OpenVINO). Each is checked inside its own wheel (its
siblings found through its RUNPATH), built against that wheel's release. Wheels come from
``pip download executorch==R --no-deps`` into --wheel-dir (cached there; build/ is not
committed). ``executorch-conformance matrix render`` turns the file into a table
(matrix/in_wheel_render.py).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "matrix" / "results" / "in_wheel_abi.json"
WHEEL_RELEASES = ("1.3.1", "1.4.1", "1.5.0", "1.5.1")
_EXTENSION = "executorch/extension/pybindings/_portable_lib.cpython-311-x86_64-linux-gnu.so"
#: backend -> where its runtime code is, first match per wheel, with how it ships there.
BACKENDS = {
    "XNNPACK": (
        ("executorch/lib/libexecutorch_backend_xnnpack.so", "its own library"),
        (_EXTENSION, "linked into the runtime extension"),
    ),
    "OpenVINO": (("executorch/lib/libexecutorch_backend_openvino.so", "its own library"),),
    "QNN": (
        ("executorch/lib/libexecutorch_backend_qnn.so", "its own library"),
        (
            "executorch/backends/qualcomm/libqnn_executorch_backend.so",
            "its own library, which holds the registry",
        ),
    ),
}
#: A demangled name each backend's code defines, to confirm the library holds it.
MARKERS = {"XNNPACK": "XnnpackBackend", "OpenVINO": "OpenvinoBackend", "QNN": "QnnBackend"}


def _holds(lib: Path, marker: str) -> bool:
    from abi_checks.elf import read_dynamic, static_definitions

    names = {s.name for s in read_dynamic(lib).symbols if s.defined} | set(static_definitions(lib))
    if any(marker in n for n in names):
        return True
    return marker.encode() in lib.read_bytes()  # the backend's name string, registered at load


def short_why(verdict: dict) -> str:
    """The first reason of a verdict (or its notes), for a table cell."""
    if verdict["reasons"]:
        first = verdict["reasons"][0]
        more = len(verdict["reasons"]) - 1
        return first + (f" (+{more} more)" if more else "")
    return "; ".join(verdict["notes"])


def judge(release: str, root: Path, against: list[str]) -> list[dict]:
    from abi_checks.check import check_library

    rows: list[dict[str, Any]] = []
    for backend, places in BACKENDS.items():
        found = next(((p, how) for p, how in places if (root / p).is_file()), None)
        if found is None:
            rows.append({"backend": backend, "release": release, "library": None, "how": "not shipped"})
            continue
        path, how = found
        if not _holds(root / path, MARKERS[backend]):
            rows.append(
                {"backend": backend, "release": release, "library": path, "how": f"{how}: not found in it"}
            )
            continue
        report = check_library(root / path, against, release, root=root)
        rows.append(
            {
                "backend": backend,
                "release": release,
                "library": path,
                "how": how,
                "imports": len(report.imports),
                "runtime_copy": report.runtime_copy,
                "verdicts": {
                    v.release: {"verdict": v.verdict, "why": short_why(v.as_dict()), "reasons": v.reasons}
                    for v in report.verdicts
                },
            }
        )
    return rows


def generate(wheel_dir: Path, against: list[str]) -> dict:
    from abi_checks.tools.make_baseline import find_or_download_wheel, sha256

    rows, wheels = [], {}
    for release in WHEEL_RELEASES:
        wheel = find_or_download_wheel(release, wheel_dir)
        wheels[release] = {"wheel": wheel.name, "sha256": sha256(wheel)}
        with tempfile.TemporaryDirectory(prefix=f"in-wheel-{release}-") as tmp, zipfile.ZipFile(wheel) as z:
            z.extractall(tmp)
            rows += judge(release, Path(tmp), against)
    return {
        "generated": _dt.date.today().isoformat(),
        "generated_by": "python -m matrix.in_wheel_abi",
        "against": against,
        "wheels": wheels,
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    from abi_checks.diff import available_releases

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel-dir", type=Path, default=REPO / "build" / "wheels")
    ap.add_argument("--out", type=Path, default=DATA)
    args = ap.parse_args(argv)
    doc = generate(args.wheel_dir, available_releases())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{args.out}: {len(doc['rows'])} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
