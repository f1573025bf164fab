"""Builds the conformance runner (conformance/device_runner/) for a backend with CMake, into build/tests/."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(sysconfig.get_paths()["purelib"])


def tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else name


def build_runner(name: str, *defines: str, prefix: str = "") -> Path:
    """The runner built with ``defines`` into build/tests/runner-<name>-<xdist worker>; its path."""
    build = ROOT / "build" / "tests" / f"runner-{name}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    prefix_path = ";".join(p for p in (str(SITE / "executorch"), prefix) if p)
    configure = [
        tool("cmake"),
        "-S",
        str(ROOT / "conformance" / "device_runner"),
        "-B",
        str(build),
        "-G",
        "Ninja",
        f"-DCMAKE_MAKE_PROGRAM={tool('ninja')}",
        f"-DCMAKE_PREFIX_PATH={prefix_path}",
        "-DCMAKE_BUILD_TYPE=Release",
        *defines,
    ]
    for argv in (configure, [tool("cmake"), "--build", str(build)]):
        proc = subprocess.run(argv, capture_output=True, text=True)
        assert proc.returncode == 0, f"{' '.join(argv)} failed:\n{proc.stdout}\n{proc.stderr}"
    return build / "conformance_runner"


def reference_runner() -> Path:
    """The runner linked with the reference backend through its CMake package (ReferenceBackend::Backend)."""
    return build_runner(
        "reference",
        "-DRUNNER_BACKEND_PACKAGE=ReferenceBackend",
        "-DRUNNER_BACKEND_TARGET=ReferenceBackend::Backend",
        prefix=str(SITE / "reference_backend"),
    )


def runner_file_hashes(runner: Path) -> dict[str, str]:
    """The sha256 of every file of the runner directory (the binary, lib/, executorch/) by relative path."""
    files = [runner, *runner.parent.glob("lib/*"), *runner.parent.glob("executorch/**/*")]
    return {
        p.relative_to(runner.parent).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in files
        if p.is_file()
    }


def build_broken_runtime(build: Path) -> Path:
    """The broken backends' runtime libraries (broken/runtime/) built with CMake against the installed
    executorch into ``build``; ``build``."""
    import executorch

    import backend_kit

    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for cmd in (
        [
            tool("cmake"),
            "-S",
            str(Path(__file__).parent / "broken" / "runtime"),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMAKE_PREFIX_PATH={next(iter(executorch.__path__))}",
            f"-DBackendKit_DIR={backend_kit.cmake_dir()}",
            # No optimization: the defects do not depend on it, the samples are tiny, and the build of
            # ten libraries takes 65 s of CPU instead of 112 s (37 s wall instead of 62 s on two cores).
            "-DCMAKE_BUILD_TYPE=",
        ],
        [tool("cmake"), "--build", str(build)],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-4000:]}{proc.stderr[-4000:]}"
    return build
