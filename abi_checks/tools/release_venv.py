#!/usr/bin/env python3
"""A venv of an older ExecuTorch release beside the project's pinned torch, made once and reused.

    python3.11 -m abi_checks.tools.release_venv RELEASE [--work DIR]

makes DIR/venv-RELEASE (default DIR: build/abi-work in the repository, or $ET_ABI_WORK) with
``python3.11 -m venv`` and ``pip install torch==2.13.0 executorch==RELEASE`` (torch first, so pip keeps
the pinned build), plus ``crc32c`` (the contract kit, which the reference backend's Python side imports
from the source tree, checks header format 2 with it), unless the venv already has that executorch.
It needs only the standard library, so CI makes these venvs in the background before the project's
.venv exists. Used by ``prove_table`` (1.5.0) and for the cross-release registration test (1.4.1).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_WORK = Path(os.environ.get("ET_ABI_WORK", REPO / "build" / "abi-work"))
TORCH = "torch==2.13.0"
#: What every such venv holds besides torch and executorch.
EXTRA = ("crc32c>=2.7",)


def venv_path(release: str, work: Path = DEFAULT_WORK) -> Path:
    """Where the venv of ``release`` lives."""
    return work / f"venv-{release}"


def installed(venv: Path) -> str | None:
    """The executorch version installed in ``venv``, None when there is none (or no venv)."""
    python = venv / "bin/python"
    if not python.exists():
        return None
    done = subprocess.run(
        [str(python), "-c", "from importlib.metadata import version; print(version('executorch'))"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def _run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True)


def ensure(release: str, work: Path = DEFAULT_WORK) -> Path:
    """The venv of ``release``, made (or completed) if needed; CalledProcessError if pip fails."""
    venv = venv_path(release, work)
    pip = [str(venv / "bin/python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    if not (installed(venv) or "").startswith(release):
        venv.parent.mkdir(parents=True, exist_ok=True)
        _run([shutil.which("python3.11") or sys.executable, "-m", "venv", str(venv)])
        _run(pip + [TORCH])
        _run(pip + [TORCH, f"executorch=={release}"])
    _run(pip + list(EXTRA))
    return venv


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", help="the executorch release, for example 1.4.1")
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="where the venv goes")
    args = ap.parse_args(argv)
    started = time.monotonic()
    try:
        venv = ensure(args.release, args.work)
    except subprocess.CalledProcessError as exc:
        print(f"release_venv: executorch {args.release}: {' '.join(exc.cmd)} failed ({exc.returncode})")
        return 1
    print(f"release_venv: {venv} has executorch {args.release} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
