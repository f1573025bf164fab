"""The C++ headers (``executorch/include``) of another executorch release's wheel.

Releases before 1.3 ship no headers. ``headers_of(version, cache)`` returns the
``include/`` folder of the executorch ``version`` wheel for this Python and
platform, downloading the wheel once (``pip download --no-deps``, by the
interpreter that has pip) and extracting only ``executorch/include/`` into
``cache/executorch-<version>/``. Raises RuntimeError, one line, when the wheel
cannot be had.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

PREFIX = "executorch/include/"


def _pip() -> list[str]:
    """A pip to download with: this interpreter's, else its base interpreter's (uv venvs have none)."""
    for python in (sys.executable, getattr(sys, "_base_executable", None), shutil.which("python3")):
        if python and subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode == 0:
            return [python, "-m", "pip"]
    raise RuntimeError("no pip to download a wheel with (neither this Python nor its base has one)")


def headers_of(version: str, cache: Path) -> Path:
    """``<cache>/executorch-<version>/include`` (the wheel's include/ folder)."""
    target = cache / f"executorch-{version}"
    include = target / "include"
    if (include / "executorch" / "runtime" / "backend" / "interface.h").is_file():
        return include
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    py = f"{sys.version_info.major}{sys.version_info.minor}"
    try:
        pip = _pip()
    except RuntimeError as exc:
        raise RuntimeError(f"cannot download the executorch {version} wheel for its headers: {exc}") from None
    cmd = [
        *pip,
        "download",
        "--no-deps",
        "--only-binary",
        ":all:",
        "--python-version",
        py,
        "-d",
        str(wheels),
        f"executorch=={version}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    found = sorted(wheels.glob(f"executorch-{version}*-cp{py}-*.whl"))
    if proc.returncode != 0 or not found:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or ["no wheel"]
        raise RuntimeError(f"cannot download the executorch {version} wheel for its headers: {tail[0]}")
    with zipfile.ZipFile(found[-1]) as wheel:
        members = [m for m in wheel.namelist() if m.startswith(PREFIX)]
        if not members:
            raise RuntimeError(f"the executorch {version} wheel {found[-1].name} has no {PREFIX}")
        for member in members:
            wheel.extract(member, target / "_unpacked")
    shutil.rmtree(include, ignore_errors=True)
    (target / "_unpacked" / PREFIX).rename(include)
    shutil.rmtree(target / "_unpacked", ignore_errors=True)
    return include
