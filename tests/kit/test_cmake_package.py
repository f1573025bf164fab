"""backend_kit_add_backend(... CMAKE_PACKAGE Name) refuses what it cannot make, at configure time, with a
message naming the target and what to give instead, and the installed package refuses an executorch of
another minor release than the one it was built for (kit 0.1.6; the package is also built and linked by the
conformance runner in tests/kit/test_new_backend.py and tests/packaging/test_vendor_from_wheels.py)."""

from __future__ import annotations

import re
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


def _cmake(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CMAKE, *map(str, args)], capture_output=True, text=True, timeout=1200, cwd=cwd, check=False
    )


def _consumer(tmp_path: Path, prefix: Path, name: str) -> subprocess.CompletedProcess:
    """Configures a project that finds the package as the conformance runner does."""
    import executorch

    src = tmp_path / f"{name}-consumer"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.28)\nproject(c LANGUAGES CXX)\n"
        'find_package(Mine CONFIG REQUIRED)\nmessage(STATUS "found Mine::Backend")\n'
    )
    return _cmake(
        "-S", src, "-B", tmp_path / f"{name}-consumer-build",
        f"-DCMAKE_PREFIX_PATH={next(iter(executorch.__path__))};{prefix}",
    )  # fmt: skip


def test_a_package_built_for_another_executorch_minor_release_is_refused(tmp_path):
    """The installed config compares the executorch minor release it was built for with the one the
    consuming project finds: the same release is found, another is refused naming both and what to do. The
    package is built and installed against this environment's executorch; the one built for another
    release is that package with the release its config records rewritten (the other releases' wheels are
    the matrix's, not this environment's)."""
    import executorch.version

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "b.cpp").write_text("int mine_unused = 0;\n")
    (tmp_path / "src" / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.28)\nproject(p VERSION 1.0.0 LANGUAGES CXX)\n"
        "find_package(BackendKit 0.1.6 CONFIG REQUIRED)\n"
        "backend_kit_add_backend(b SOURCES b.cpp CMAKE_PACKAGE Mine DESTINATION lib)\n"
    )
    build, prefix = tmp_path / "build", tmp_path / "prefix"
    done = _cmake(
        "-S", tmp_path / "src", "-B", build, f"-DBackendKit_DIR={backend_kit.cmake_dir()}",
        f"-DPython_EXECUTABLE={sys.executable}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    for step in (("--build", build), ("--install", build, "--prefix", prefix)):
        done = _cmake(*step)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    config = prefix / "lib" / "cmake" / "Mine" / "MineConfig.cmake"
    recorded = re.search(r'_built_minor "([^"]+)"', config.read_text())
    assert recorded, "the config records the release it was built for"
    built = recorded.group(1)  # as executorch's CMake package names itself: 1.5.1+cpu
    assert built.split("+")[0] == executorch.version.__version__.split("+")[0]

    same = _consumer(tmp_path, prefix, "same")
    assert same.returncode == 0 and "found Mine::Backend" in same.stdout, same.stderr[-3000:]

    major, minor = (int(x) for x in built.split(".")[:2])
    other = f"{major}.{minor - 1 if minor else minor + 1}.0"
    config.write_text(
        config.read_text()
        .replace(f"executorch {built}", f"executorch {other}")
        .replace(f'"{built}"', f'"{other}"')
    )
    refused = _consumer(tmp_path, prefix, "other")
    said = " ".join(refused.stderr.split())
    assert refused.returncode != 0
    assert f"Mine 1.0.0 was built for executorch {other}, but this project uses executorch {built}" in said, (
        said
    )
    assert "Rebuild it against this executorch" in said, said
