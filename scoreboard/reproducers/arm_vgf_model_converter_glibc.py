"""Arm VGF flow (executorch 1.5.1's `vgf` extra): the pinned model converter, ai_ml_sdk_model_converter 0.10.0,
installs on a glibc 2.36 system and cannot run there, so no VGF program can be lowered.

Standalone (the model converter's wheel only; no conformance-suite code):

    .venv-arm/bin/python -m pip install ai_ml_sdk_model_converter==0.10.0
    .venv-arm/bin/python arm_vgf_model_converter_glibc.py

What it does: reads the wheel's platform tag from its metadata, the C library of this system
(``platform.libc_ver``), and runs the ``model-converter`` executable the wheel installs beside the interpreter
with ``--help``.

Seen (Debian 12, glibc 2.36): the wheel is tagged ``manylinux2014_x86_64`` (a promise to run on glibc 2.17 and
later), so pip installs it, but its executable needs GLIBC_2.38 and GLIBCXX_3.4.32 and exits with "version
`GLIBC_2.38' not found". VgfPartitioner runs that executable for every delegate, so lowering fails with
"Vgf compiler failed". A wheel's tag must not promise a platform its binaries cannot run on (manylinux_2_38
would say it).

Exit status: 1 while the installed model converter cannot start on this system, 0 when it starts.
"""

from __future__ import annotations

import importlib.metadata
import platform
import shutil
import subprocess
import sys
from pathlib import Path


def main() -> int:
    try:
        dist = importlib.metadata.distribution("ai_ml_sdk_model_converter")
    except importlib.metadata.PackageNotFoundError:
        print("ai_ml_sdk_model_converter is not installed: pip install ai_ml_sdk_model_converter==0.10.0")
        return 2
    wheel = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")]
    here = Path(sys.executable).parent / "model-converter"
    binary = str(here) if here.exists() else shutil.which("model-converter")
    if binary is None:
        print("no model-converter executable beside the interpreter or on PATH")
        return 2
    libc, version = platform.libc_ver()
    print(f"ai_ml_sdk_model_converter {dist.version}, wheel tags {tags}; this system: {libc} {version}")
    done = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60)
    missing = sorted(
        {w.strip("`'") for w in done.stderr.split() if w.strip("`'").startswith(("GLIBC_", "GLIBCXX_"))}
    )
    if done.returncode != 0 and missing:
        print(f"model-converter cannot start: it needs {', '.join(missing)} (exit {done.returncode})")
        return 1
    print(f"model-converter starts (exit {done.returncode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
