"""The torch axis: does the installed executorch (1.5.1) still export, lower
and run with the installed torch?

    python -m matrix.torch_axis [--results DIR] [--build DIR]     # tox -m torch

In this environment: export the golden model with tests/golden/make_golden.py
(reference backend and XNNPACK), record each file's sha256 (the renderer
compares them across torch releases), and run each produced program on this
environment's runtime (matrix/cells.py). Writes
``<results>/torch/<torch version>.json``.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from packaging.version import Version

from matrix.cells import run_cases
from matrix.runtime_build import REPO, build_runtime, required

FILES = ("reference.pte", "xnnpack.pte")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=REPO / "matrix" / "results")
    parser.add_argument("--build", type=Path, default=REPO / "build" / "torch-axis")
    args = parser.parse_args(argv)
    started = time.monotonic()
    torch_version, et_version = required("torch"), required("executorch")
    release = str(Version(et_version).base_version)
    out_root = args.build / torch_version
    cmd = [sys.executable, str(REPO / "tests" / "golden" / "make_golden.py"), "--out-root", str(out_root)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    folder = out_root / release
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else None
    library, how = build_runtime(release, args.build / "runtime")
    result: dict = {
        "torch": torch_version,
        "executorch": et_version,
        "python": sys.version.split()[0],
        "created": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "command": f"tox -e torch{''.join(torch_version.split('.')[:2])}",
        "export_command": shlex.join(["python", *cmd[1:]]).replace(f"{REPO}/", ""),
        "export_exit": proc.returncode,
        "reference_library": how,
        "files": {},
    }
    if manifest is None:
        tail = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()][-3:]
        result["export_error"] = " / ".join(tail)[:500]
    for name in FILES:
        entry = (manifest or {}).get("files", {}).get(name)
        if entry is None:
            result["files"][name] = {"exported": False, "error": result.get("export_error", "not written")}
            continue
        if "error" in entry:
            result["files"][name] = {"exported": False, "error": entry["error"][:500]}
            continue
        data = (folder / name).read_bytes()
        cell: dict[str, Any] = {
            "exported": True,
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
        }
        lib = library if name == "reference.pte" else None
        if name == "reference.pte" and library is None:
            cell["run"] = {"status": "not run", "detail": how}
        else:
            (run,) = run_cases([(folder / name, manifest_path)], lib)
            cell["run"] = run
        result["files"][name] = cell
        print(
            f"torch {torch_version}: {name}: exported ({len(data)} B); "
            f"{cell['run']['status']} ({cell['run']['detail']})",
            flush=True,
        )
    result["seconds"] = round(time.monotonic() - started, 1)
    out = args.results / "torch"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{torch_version}.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out / (torch_version + '.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
