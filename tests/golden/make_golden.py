#!/usr/bin/env python3
"""Writes the golden .pte files of one ExecuTorch release.

Run it with the Python of a virtual environment that holds the release
(``executorch==X`` and a torch it accepts)::

    /work/golden-work/venv-1.4.1/bin/python tests/golden/make_golden.py

It exports one small model (fixed seed) twice and writes, under
``tests/golden/<executorch version>/``:

``reference.pte``
    lowered with the reference backend's AOT side (``ReferencePartitioner``
    with the compile spec ``blob_format=b"1.1"``). The backend is imported from
    ``reference_backend/python`` in this checkout, or from the folder given
    with ``--reference-sources`` (this script puts it first on ``sys.path``),
    so its pip metadata bound on executorch does not apply; the AOT side is
    pure Python. The manifest records which sources (git commit, digest).
``xnnpack.pte``
    lowered with ExecuTorch's own ``XnnpackPartitioner``.
``manifest.json``
    versions, date, the command, the model's input and eager output, and per
    file: sha256, size, and what ExecuTorch's *emitter* put into the program
    (plan names, delegate backend ids, compile specs as hex, blob sizes),
    taken from the in-memory program before serialization so that it is an
    independent record to test the executorch-free reader against. When the
    suite's ``conformance`` package (pure Python, from this repository) is
    importable, the file is also read back with ``conformance.pte.read_pte``
    and each reference blob's contract header is decoded with
    ``conformance.inspection.blob_header.read_header`` (section ``"read_back"``).

If the reference backend cannot lower on this release, the error is recorded
in the manifest (``"reference": {"error": ...}``), the XNNPACK export still
happens, and the exit status is 3.

``--read-back DIR`` only (re)computes the ``"read_back"`` sections of an
existing ``DIR/manifest.json`` with the current interpreter (use it from the
project's main environment if ``conformance`` cannot be imported where the
files were made).

``tests/golden/make_all.sh`` creates one environment per release and runs this.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import shlex
import shutil
import struct
import subprocess
import sys
import traceback
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
REFERENCE_SOURCES = REPO / "reference_backend" / "python"
MAX_FILE_SIZE = 100 * 1024
SEED = 20261129
INPUT_SHAPE = (2, 8)
#: The compile spec given to the reference partitioner (key, value).
REFERENCE_COMPILE_SPEC = ("blob_format", b"1.1")


def _model_and_input():
    import torch

    class GoldenModel(torch.nn.Module):
        """Linear(8, 8) -> ReLU -> Linear(8, 4), plus a constant of the output's shape."""

        def __init__(self) -> None:
            super().__init__()
            self.fc1 = torch.nn.Linear(8, 8)
            self.fc2 = torch.nn.Linear(8, 4)
            self.register_buffer("offset", torch.randn(INPUT_SHAPE[0], 4))

        def forward(self, x):
            return torch.add(self.fc2(torch.relu(self.fc1(x))), self.offset)

    torch.manual_seed(SEED)
    model = GoldenModel().eval()
    example = torch.randn(*INPUT_SHAPE, dtype=torch.float32)
    with torch.no_grad():
        expected = model(example)
    return model, example, expected


def _emitted(manager) -> dict:
    """What the emitter put into the program (before serialization)."""
    program = manager.executorch_program
    inline = program.backend_delegate_data
    plans = []
    for plan in program.execution_plan:
        delegates = []
        for d in plan.delegates:
            location = int(d.processed.location)
            entry = {
                "backend_id": d.id,
                "compile_specs": [[s.key, bytes(s.value).hex()] for s in d.compile_specs],
                "processed_location": location,
            }
            if location == 0:  # INLINE: the emitter's bytes, before segment extraction
                entry["blob_size"] = len(inline[d.processed.index].data)
                entry["blob_sha256"] = hashlib.sha256(bytes(inline[d.processed.index].data)).hexdigest()
            delegates.append(entry)
        plans.append({"name": plan.name, "delegates": delegates})
    return {"schema_version": program.version, "plans": plans}


def _file_prefix(data: bytes) -> dict:
    """The fixed prefix of a .pte, read with struct (no reader needed)."""
    out = {"file_identifier": data[4:8].decode("ascii", "replace")}
    if data[8:12] == b"eh00":
        (length,) = struct.unpack_from("<I", data, 12)
        out["extended_header"] = {"magic": "eh00", "length": length}
    else:
        out["extended_header"] = None
    return out


def read_back(data: bytes) -> dict:
    """The file as the suite's executorch-free reader sees it."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from conformance.inspection.blob_header import HeaderError, read_header
    from conformance.pte import read_pte

    program = read_pte(data)
    eh = program.extended_header
    plans = []
    for plan in program.execution_plans:
        delegates = []
        for d in plan.delegates:
            entry = {
                "backend_id": d.backend_id,
                "compile_specs": [[k, v.hex()] for k, v in d.compile_specs],
                "location": d.location.name.lower(),
                "blob_size": len(d.data),
                "blob_sha256": hashlib.sha256(d.data).hexdigest(),
                "blob_first_bytes": d.data[:8].hex(),
            }
            try:
                h = read_header(d.data)
                entry["contract_header"] = {
                    "header_length": h.header_length,
                    "header_format_version": h.header_format_version,
                    "backend_id": h.backend_id,
                    "blob_format": list(h.blob_format),
                    "backend_version": list(h.backend_version),
                    "executorch_version": list(h.executorch_version),
                    "payload_size": h.payload_size,
                    "checksum": f"0x{h.checksum:08x}",
                }
            except HeaderError as exc:
                entry["contract_header"] = None
                entry["contract_header_error"] = str(exc)
            delegates.append(entry)
        plans.append(
            {
                "name": plan.name,
                "num_inputs": plan.num_inputs,
                "num_outputs": plan.num_outputs,
                "operators": list(plan.operators),
                "delegates": delegates,
            }
        )
    return {
        "file_identifier": program.file_identifier,
        "schema_version": program.schema_version,
        "extended_header": None
        if eh is None
        else {
            "length": eh.length,
            "program_size": eh.program_size,
            "segment_base_offset": eh.segment_base_offset,
            "segment_data_size": eh.segment_data_size,
        },
        "segments": [[s.offset, s.size] for s in program.segments],
        "inline_delegate_data": [len(b) for b in program.backend_delegate_data],
        "named_data": [n.key for n in program.named_data],
        "plans": plans,
    }


def _fill_read_back(manifest: dict, out: Path) -> None:
    for name, entry in manifest["files"].items():
        if "sha256" not in entry:
            continue
        try:
            entry["read_back"] = read_back((out / name).read_bytes())
            entry.pop("read_back_error", None)
        except Exception as exc:  # noqa: BLE001  recorded, not fatal: the main venv can redo it
            entry["read_back"] = None
            entry["read_back_error"] = f"{type(exc).__name__}: {exc}"


def _sources_provenance(sources: Path) -> dict:
    """Which reference backend sources lowered reference.pte (they change over time)."""
    files = sorted((sources / "reference_backend").rglob("*.py"))
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.relative_to(sources).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    info: dict = {"path": str(sources), "py_files_sha256": digest.hexdigest()}
    marker = sources / "SOURCE_COMMIT"  # written by make_all.sh into a `git archive` snapshot
    if marker.is_file():
        info["git_commit"] = marker.read_text().strip()
        info["modified_since_commit"] = False
        return info
    try:

        def git(*args: str) -> str:
            cmd = ["git", "-C", str(REPO), *args]
            return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout

        info["git_commit"] = git("rev-parse", "HEAD").strip()
        info["modified_since_commit"] = bool(git("status", "--porcelain", "--", str(sources)).strip())
    except (OSError, subprocess.CalledProcessError):
        info["git_commit"] = None
    return info


def _export(out_root: Path, sources: Path) -> int:
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(sources))
    # Tools installed in this environment (executorch 1.3 lowering runs `flatc`).
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    import executorch
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from executorch.version import __version__ as et_version

    release = et_version.split("+")[0]
    final = out_root / release
    out = out_root / f".{release}.new"  # replaces `final` only once everything is written
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    model, example, expected = _model_and_input()
    exported = torch.export.export(model, (example,))

    manifest: dict = {
        "executorch_version": et_version,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "command": shlex.join([sys.executable, *sys.argv]),
        "generator": "tests/golden/make_golden.py",
        "model": {
            "description": "add(fc2(relu(fc1(x))), offset); fc1 = Linear(8, 8), fc2 = Linear(8, 4), "
            "offset a [2, 4] buffer; float32",
            "seed": SEED,
            "input": example.tolist(),
            "expected_output": expected.tolist(),
        },
        "reference_backend_sources": _sources_provenance(sources),
        "files": {},
    }

    def lower(partitioner_factory):
        program = to_edge_transform_and_lower(exported, partitioner=[partitioner_factory()])
        return program.to_executorch()

    def reference_partitioner():
        from executorch.exir.backend.compile_spec_schema import CompileSpec

        import reference_backend

        manifest["reference_backend_imported_from"] = str(Path(reference_backend.__file__).parent)
        manifest["reference_backend_version"] = reference_backend.__version__
        return reference_backend.ReferencePartitioner([CompileSpec(*REFERENCE_COMPILE_SPEC)])

    def xnnpack_partitioner():
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

        return XnnpackPartitioner()

    status = 0
    for name, factory in (("reference.pte", reference_partitioner), ("xnnpack.pte", xnnpack_partitioner)):
        try:
            manager = lower(factory)
            data = bytes(manager.buffer)
        except Exception as exc:  # noqa: BLE001  a release that cannot make it is recorded
            manifest["files"][name] = {
                "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc().splitlines()[-12:],
            }
            print(f"{name}: FAILED on executorch {et_version}: {type(exc).__name__}: {exc}", file=sys.stderr)
            status = 3
            continue
        if len(data) >= MAX_FILE_SIZE:
            shutil.rmtree(out)
            raise SystemExit(f"{name} is {len(data)} bytes, over the {MAX_FILE_SIZE}-byte limit")
        (out / name).write_bytes(data)
        manifest["files"][name] = {
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            **_file_prefix(data),
            "emitted": _emitted(manager),
        }
        print(f"wrote {final / name} ({len(data)} bytes)")

    _fill_read_back(manifest, out)
    manifest["executorch_path"] = next(iter(executorch.__path__))
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    shutil.rmtree(final, ignore_errors=True)
    out.rename(final)
    print(f"wrote {final / 'manifest.json'}")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out-root", type=Path, default=HERE, help="where <release>/ goes (default: tests/golden)"
    )
    parser.add_argument(
        "--reference-sources",
        type=Path,
        default=REFERENCE_SOURCES,
        metavar="DIR",
        help="folder holding the reference_backend package (default: "
        "reference_backend/python of this checkout; make_all.sh passes a "
        "`git archive` snapshot of one commit)",
    )
    parser.add_argument(
        "--read-back",
        type=Path,
        metavar="DIR",
        help="only recompute the read_back sections of DIR/manifest.json",
    )
    args = parser.parse_args(argv)
    if args.read_back:
        path = args.read_back / "manifest.json"
        manifest = json.loads(path.read_text())
        _fill_read_back(manifest, args.read_back)
        path.write_text(json.dumps(manifest, indent=1) + "\n")
        print(f"updated {path}")
        return 0
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    return _export(args.out_root, args.reference_sources.resolve())


if __name__ == "__main__":
    sys.exit(main())
