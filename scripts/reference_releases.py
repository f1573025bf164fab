"""Environments of the reference backend's published releases, for its release grid.

Each release of the reference backend is the commit that set its ``__version__``
(``git log`` of reference_backend/python/reference_backend/version.py). For each
release asked for, this script extracts that commit's ``reference_backend/`` and
``kit/`` (``git archive``), makes a virtual environment of its own under
``build/reference-releases/<version>/``, and builds and installs that release's
kit and backend (C++ runtime included) into it, against the executorch of this
project's ``.venv``. torch and executorch are not installed again: a ``.pth``
file puts ``.venv``'s site-packages after the environment's own, so the release's
packages shadow the ones this project installed, and nothing else differs.

``--broken`` also builds ``0.5.0-unbumped``: the newest release with a new
operator (``aten::exp``, opcode 23) added without bumping the blob format, the
mistake the grid exists to catch (``scripts/release_grid/unbumped_opcode.patch``).

Prints one line per environment: ``VERSION=PATH/bin/python``, the arguments of
``executorch-conformance release-grid --release``.

    .venv/bin/python scripts/reference_releases.py 0.3.0 0.4.0 --broken
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION_FILE = "reference_backend/python/reference_backend/version.py"
OUT = ROOT / "build" / "reference-releases"
PATCH = Path(__file__).resolve().parent / "release_grid" / "unbumped_opcode.patch"
BROKEN = "0.5.0-unbumped"
#: Bumped when what build() does changes: environments made before are made again.
RECIPE = 3


def releases() -> dict[str, str]:
    """{version: commit} of every release: the first commit with each ``__version__`` of version.py."""
    log = subprocess.run(
        ["git", "-C", str(ROOT), "log", "--reverse", "--format=%H", "--", VERSION_FILE],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    found: dict[str, str] = {}
    for commit in log:
        text = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{commit}:{VERSION_FILE}"], capture_output=True, text=True
        ).stdout
        match = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
        if match and match.group(1) not in found:
            found[match.group(1)] = commit
    return found


def _extract(commit: str, dest: Path) -> None:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit, "reference_backend", "kit"],
        capture_output=True,
    )
    if archive.returncode != 0:  # releases before the kit: reference_backend/ alone
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", commit, "reference_backend"],
            capture_output=True,
            check=True,
        )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(dest, filter="data")


def _run(argv: list[str], log: Path, env: dict[str, str]) -> None:
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    if done.returncode != 0:
        tail = "".join(log.read_text(errors="replace").splitlines(keepends=True)[-25:])
        sys.exit(
            f"reference_releases: {' '.join(argv[:4])} ... failed (exit {done.returncode}); log {log}:\n{tail}"
        )


def _admits_current_kit(python: Path) -> bool:
    """Whether the release installed for ``python`` requires the kit in a range holding this project's kit."""
    script = (
        "import importlib.metadata as m, sys\n"
        "from packaging.requirements import Requirement\n"
        "reqs = [Requirement(r) for r in m.requires('executorch-reference-backend') or []]\n"
        "kit = [r for r in reqs if r.name == 'executorch-backend-kit']\n"
        "print(bool(kit) and kit[0].specifier.contains(sys.argv[1]))\n"
    )
    current = re.search(
        r'^version = "([^"]+)"', (ROOT / "kit" / "pyproject.toml").read_text(), re.MULTILINE
    ).group(1)
    done = subprocess.run([str(python), "-c", script, current], capture_output=True, text=True)
    return done.stdout.strip() == "True"


def build(version: str, commit: str, patch: Path | None = None) -> Path:
    """The environment of ``version`` (made from ``commit``, with ``patch`` applied), built unless its
    python already imports that version; the path of its python."""
    home = OUT / version
    python = home / "venv" / "bin" / "python"
    stamp = home / "built-from"
    wanted = f"{RECIPE} {commit} {patch.read_bytes().hex()[:64] if patch else ''}"
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    shutil.rmtree(home, ignore_errors=True)
    src = home / "src"
    src.mkdir(parents=True)
    _extract(commit, src)
    if patch is not None:
        # src lies inside this repository's work tree: a repository of its own, or git apply would take
        # paths relative to this one's root and skip every file
        subprocess.run(["git", "init", "-q"], cwd=src, check=True)
        subprocess.run(["git", "apply", "--verbose", str(patch)], cwd=src, check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home / "venv")], check=True)
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "_reference_release_base.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "-q", "install"]
    pip += ["--no-deps", "--no-build-isolation", "--force-reinstall"]
    log = home / "build.log"
    if (src / "kit").is_dir():
        _run([*pip, str(src / "kit")], log, env)
    _run([*pip, str(src / "reference_backend")], log, env)
    if _admits_current_kit(python):
        # As installing the release today would: the newest kit its requirement admits (this project's), which
        # the suite's own modules in the vendor process need (they import backend_kit.aot, new in 0.1.3).
        _run([*pip, str(ROOT / "kit")], log, env)
    stamp.write_text(wanted)
    return python


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("versions", nargs="*", help="releases to build (default: every release)")
    parser.add_argument("--broken", action="store_true", help=f"also build {BROKEN}")
    args = parser.parse_args(argv)
    known = releases()
    unknown = [v for v in args.versions if v not in known]
    if unknown:
        parser.error(
            f"no release {', '.join(unknown)} in this clone's history; the releases are {', '.join(known)} "
            "(a shallow clone lacks the older ones: git fetch --unshallow)"
        )
    for version in args.versions or list(known):
        print(f"{version}={build(version, known[version])}", flush=True)
    if args.broken:
        newest = list(known)[-1]
        print(f"{BROKEN}={build(BROKEN, known[newest], PATCH)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
