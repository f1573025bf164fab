"""The runner library in a vendor process (conformance/vendor/in_process_runner.py): built once and reused, and
every way it cannot be built or run is one clear RunnerLibraryError naming the tool, the directory or the
bundle line, never a traceback."""

from __future__ import annotations

import pytest

from conformance.vendor import in_process_runner as runner
from conformance.vendor.in_process_runner import RunnerLibraryError


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> object:
    """The library built into a cache directory of this module's own (a real cmake build, about 10 s)."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(runner.DIR_ENV, str(cache))
        return runner.library()


def test_the_library_is_built_once_and_reused(built, monkeypatch):
    monkeypatch.setenv(runner.DIR_ENV, str(built.parent.parent))
    assert built.is_file() and built.name == runner.LIBRARY
    mtime = built.stat().st_mtime_ns
    assert runner.library() == built and built.stat().st_mtime_ns == mtime


def test_a_malformed_bundle_is_refused_naming_its_line(built, tmp_path):
    (tmp_path / "manifest.txt").write_text(
        "executorch-conformance-bundle 1\nentry e concurrent\nthreads 0\nend\n"
    )
    with pytest.raises(
        RunnerLibraryError, match=r"exit code 65\): manifest line 3: expected 'threads <n=1..256>'"
    ):
        runner.run_bundle(built, tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RunnerLibraryError, match="cannot open the manifest"):
        runner.run_bundle(built, empty)


def test_without_cmake_or_a_compiler_or_a_writable_cache_the_error_says_what_to_do(tmp_path, monkeypatch):
    missing = str(tmp_path / "no-such-cmake")
    monkeypatch.setenv(runner.DIR_ENV, str(tmp_path / "cache"))
    with pytest.raises(RunnerLibraryError, match=r"\(configuring\): .*no-such-cmake is not installed"):
        runner.library(cmake=missing)
    # a machine without a compiler: nothing on PATH (cmake is found next to this interpreter)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("CXX", "")
    with pytest.raises(RunnerLibraryError, match="needs a C\\+\\+17 compiler: none found"):
        runner.library()
    monkeypatch.undo()
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(runner.DIR_ENV, str(blocker / "cache"))
    with pytest.raises(
        RunnerLibraryError, match=rf"cannot build the runner library in .*; set {runner.DIR_ENV}"
    ):
        runner.library()


def test_a_library_that_does_not_load_is_named(tmp_path):
    fake = tmp_path / runner.LIBRARY
    fake.write_text("not ELF")
    with pytest.raises(RunnerLibraryError, match=f"the runner library {fake} does not load"):
        runner.run_bundle(fake, tmp_path)
