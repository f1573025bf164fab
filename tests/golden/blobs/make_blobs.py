"""Writes the golden blobs of the installed reference backend version into
tests/golden/blobs/<version>/ and lists every released version's blobs in
tests/golden/blobs/blobs.json (the rows of the blob grid, matrix/grid.py).

    python tests/golden/blobs/make_blobs.py     # in an env with the reference backend installed

Each blob is the golden model (tests/golden/make_golden.py) lowered with the
reference backend and one compile spec variant (VARIANTS), exported by the
installed executorch. Blobs of earlier versions stay as they are and stay
listed: 0.1.0's are the ``reference.pte`` goldens of tests/golden/<release>/
(RELEASED below), later ones the folders this script wrote (0.2.0/, ...).
"""

from __future__ import annotations

import datetime
import hashlib
import importlib.util
import json
import shlex
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
#: name -> compile specs (key, value) for the installed version's blobs.
VARIANTS = {
    "default": (),
    "header-format-1": (("header_format", b"1"),),
    "format-1.1-header-1": (("blob_format", b"1.1"), ("header_format", b"1")),
}
#: Blobs of earlier released versions, already committed: (name, version, program, manifest with the model).
RELEASED = (
    (
        "0.1.0 golden (format 1.1, header 1)",
        "0.1.0",
        "tests/golden/1.5.1/reference.pte",
        "tests/golden/1.5.1/manifest.json",
    ),
)


def _make_golden():
    spec = importlib.util.spec_from_file_location("make_golden", HERE.parent / "make_golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    warnings.simplefilter("ignore")
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir.backend.compile_spec_schema import CompileSpec
    from executorch.version import __version__ as et_version

    import reference_backend
    from backend_kit.header import decode
    from conformance.pte import read_pte

    version = reference_backend.__version__
    out = HERE / version
    out.mkdir(exist_ok=True)
    model, example, expected = _make_golden()._model_and_input()
    exported = torch.export.export(model, (example,))
    manifest = {
        "date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "command": shlex.join(["python", "tests/golden/blobs/make_blobs.py"]),
        "executorch_version": et_version,
        "torch_version": torch.__version__,
        "model": {"input": example.tolist(), "expected_output": expected.tolist()},
        "blobs": [],
    }
    for label, written_by, program, model_from in RELEASED:
        manifest["blobs"].append(
            {"name": label, "written_by": written_by, "path": program, "expected": model_from}
        )
    # The blobs this script wrote for earlier released versions stay listed as they are.
    listed = HERE / "blobs.json"
    if listed.exists():
        before = json.loads(listed.read_text())
        if before.get("model") != manifest["model"]:
            raise SystemExit(
                "the golden model's input or output changed; earlier blobs would no longer match it"
            )
        released_paths = {program for _, _, program, _ in RELEASED}
        manifest["blobs"] += [
            b for b in before["blobs"] if b["written_by"] != version and b["path"] not in released_paths
        ]
    for variant, specs in VARIANTS.items():
        partitioner = reference_backend.ReferencePartitioner([CompileSpec(k, v) for k, v in specs])
        lowered = to_edge_transform_and_lower(exported, partitioner=[partitioner]).to_executorch()
        path = out / f"{variant}.pte"
        path.write_bytes(lowered.buffer)
        header = decode(bytes(read_pte(path).delegates()[0].data))
        manifest["blobs"].append(
            {
                "name": f"{version} {variant} (format {header.blob_format[0]}.{header.blob_format[1]}, "
                f"header {header.header_format_version})",
                "written_by": version,
                "path": str(path.relative_to(REPO)),
                "expected": "tests/golden/blobs/blobs.json",
                "compile_specs": [[k, v.decode()] for k, v in specs],
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            }
        )
    (HERE / "blobs.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print("\n".join(f"{b['path']}: {b['name']}" for b in manifest["blobs"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
