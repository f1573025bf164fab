"""backend_kit_add_backend(... CMAKE_PACKAGE Name) refuses what it cannot make, at configure time, with a
message naming the target and what to give instead (kit 0.1.6; the package itself is built and linked by
the conformance runner in tests/kit/test_new_backend.py and tests/packaging/test_vendor_from_wheels.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import backend_kit

CMAKE = Path(sys.executable).parent / "cmake"


def _configure(tmp_path: Path, call: str) -> subprocess.CompletedProcess:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "b.cpp").write_text("int unused = 0;\n")
    (tmp_path / "src" / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.28)\nproject(p VERSION 1.0.0 LANGUAGES CXX)\n"
        "find_package(BackendKit 0.1.6 CONFIG REQUIRED)\n" + call + "\n"
    )
    return subprocess.run(
        [
            CMAKE,
            "-S",
            tmp_path / "src",
            "-B",
            tmp_path / "build",
            f"-DBackendKit_DIR={backend_kit.cmake_dir()}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (
            "backend_kit_add_backend(b SOURCES b.cpp EXPORT mine CMAKE_PACKAGE Mine)",
            (
                "backend_kit_add_backend(b): give EXPORT or CMAKE_PACKAGE, not both (CMAKE_PACKAGE installs its "
                "own export set, MineTargets)"
            ),
        ),
        (
            "backend_kit_add_backend(b SOURCES b.cpp CMAKE_PACKAGE 9-lives)",
            (
                "backend_kit_add_backend(b): CMAKE_PACKAGE '9-lives' is not a CMake package name (a letter, "
                "then letters, digits or _)"
            ),
        ),
    ],
)
def test_a_cmake_package_the_kit_cannot_make_is_refused_with_the_reason(tmp_path, call, says):
    done = _configure(tmp_path, call)
    assert done.returncode != 0
    assert says in " ".join(done.stderr.split()), done.stderr[-2000:]
