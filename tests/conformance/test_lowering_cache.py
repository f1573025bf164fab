"""The lowering cache (conformance/vendor/lowering_cache.py): content-addressed, a hit gives back what was
stored, a bad entry is a miss, the size bound holds; the fingerprint keeps its key across a C++-only
reinstall and changes with the Python package; and, with real lowerings of the reference backend, a warm
cache stands for a lowering, while --no-cache, a certify run and AOT-5's re-lowerings never read it, and
a fault chosen through the environment is never masked.

The broken backends of tests/conformance/broken choose their faults through MISBEHAVE,
LENIENT_MINOR_ONLY, BROKEN_RUNTIME_DIR, FOREIGN_RUNPATH_LIBRARY (the runtime: never cached) and
HOSTILE_IMPORT (the descriptor's import: before any lowering); a backend whose lowering reads a variable
declares it in ``lowering_environment``, which ``test_a_fault_chosen_by_the_environment_is_not_masked``
covers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import textwrap
from pathlib import Path

import pytest
from suite_runner import run_suite

from conformance.context import Context
from conformance.outcomes import CheckFailed
from conformance.run.run_options import RunOptions
from conformance.vendor import lowering_cache as lc
from conformance.vendor import lowering_fingerprint as fp
from conformance.vendor import task_registry as tasks
from conformance.vendor.lowering_cache import LoweringCache
from conformance.vendor.process import VendorProcess
from conformance.vendor.records import Lowering, PartitionRecord

REFERENCE = "reference_backend.conformance:DESCRIPTOR"


def _lowering(pte: bytes) -> Lowering:
    record = PartitionRecord(
        "p.P", {"t0": ("B", (("k", b"v"),))}, (("n", "aten::add.Tensor", "t0"),), (), frozenset({"t0"})
    )
    return Lowering(pte, (record,), {"B": ("m.B",)}, {})


# --------------------------------------------------------------------------- the store


def test_the_key_changes_with_each_component():
    base = ("fp", "mod:D", tasks.LOWER, ("mlp", "default", None, "w1"))
    keys = {
        lc.key(*base),
        lc.key("fp2", *base[1:]),
        lc.key(base[0], "mod:OTHER", *base[2:]),
        lc.key(base[0], b"pickled descriptor", *base[2:]),
        lc.key(*base[:2], tasks.LOWER_MODEL, base[3]),
        lc.key(*base[:3], ("mlp", "named_data", None, "w1")),
        lc.key(*base[:3], ("mlp", "default", None, "w2")),
        lc.key(*base[:3], ("conv", "default", None, "w1")),
    }
    assert len(keys) == 8
    assert lc.key(*base) == lc.key(*base)


def test_only_lowering_tasks_are_cached():
    assert lc.cacheable(tasks.LOWER, ("mlp", "default", None, "w"))
    assert not lc.cacheable(tasks.LOWER, ("mlp", "named_data", "/tmp/out", "w"))  # writes files of the run
    for task in (tasks.LOWER_OPERATOR_BATCH, tasks.LOWER_MODEL, tasks.QUANTIZED_FLOW):
        assert lc.cacheable(task, ("x",))
    for task in (tasks.EXECUTE, tasks.LOAD_RUNTIME, tasks.TRY_LOAD, tasks.SAMPLE, tasks.EXECUTE_REPEATEDLY):
        assert not lc.cacheable(task, ())


def test_a_hit_gives_back_what_was_stored(tmp_path):
    cache = LoweringCache(tmp_path)
    stored = _lowering(bytes(range(256)) * 10)
    assert cache.get("ab" * 32) is None
    cache.put_result("ab" * 32, stored)
    kind, found = cache.get("ab" * 32)
    assert kind == "result" and found == stored and found.pte == stored.pte
    cache.put_error("cd" * 32, "make_partitioners() raised RuntimeError: no")
    assert cache.get("cd" * 32) == ("error", "make_partitioners() raised RuntimeError: no")
    assert cache.hits == 2
    assert LoweringCache(tmp_path, read=False).get("ab" * 32) is None  # a certify run's cache: writes only


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "foreign_type"])
def test_a_corrupt_entry_is_a_miss_and_is_removed(tmp_path, damage):
    cache = LoweringCache(tmp_path)
    address = "ef" * 32
    cache.put_result(address, _lowering(b"x" * 1000))
    path = next(tmp_path.rglob("*.entry"))
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[:-10])
    elif damage == "flip":
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    elif damage == "garbage":
        path.write_bytes(os.urandom(200))
    elif damage == "empty":
        path.write_bytes(b"")
    else:  # whole and well-formed, but of a type no task returns: never unpickled into this process
        import pickle

        payload = pickle.dumps(("result", Path("/")))
        path.write_bytes(lc.MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    assert cache.get(address) is None
    assert not path.exists()
    assert cache.hits == 0


def test_entries_lists_what_a_run_stored_and_skips_what_is_not_whole(tmp_path):
    cache = LoweringCache(tmp_path)
    assert list(LoweringCache(tmp_path / "none").entries()) == []
    stored = _lowering(b"p" * 100)
    cache.put_result("ab" * 32, stored)
    cache.put_error("cd" * 32, "lowering raised RuntimeError: no")
    (tmp_path / "ef").mkdir()
    (tmp_path / "ef" / ("ef" * 32 + lc.SUFFIX)).write_bytes(b"garbage")
    found = list(cache.entries())
    assert sorted(kind for kind, _ in found) == ["error", "result"]
    assert ("result", stored) in found and ("error", "lowering raised RuntimeError: no") in found
    assert cache.hits == 0  # looking is not a lookup


def test_an_unwritable_cache_is_no_failure(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    cache = LoweringCache(blocked / "cache")
    cache.put_result("ab" * 32, _lowering(b"x"))
    assert cache.get("ab" * 32) is None


def test_the_size_bound_evicts_the_least_recently_used(tmp_path):
    cache = LoweringCache(tmp_path)
    for i, name in enumerate(("a", "b", "c")):
        cache.put_result(name * 64, _lowering(bytes([i]) * 1000))
        os.utime(next(tmp_path.rglob(f"{name * 64}.entry")), (1000 + i, 1000 + i))
    size = next(tmp_path.rglob("*.entry")).stat().st_size
    cache.max_bytes = 3 * size + size // 2  # room for three entries
    assert cache.get("a" * 64) is not None  # used: now the most recent
    cache.put_result("d" * 64, _lowering(b"d" * 1000))
    assert cache.get("b" * 64) is None  # the least recently used went
    assert all(cache.get(n * 64) is not None for n in "acd")
    assert sum(p.stat().st_size for p in tmp_path.rglob("*.entry")) <= cache.max_bytes


def test_where_the_cache_lives(monkeypatch, tmp_path):
    monkeypatch.delenv(lc.DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert lc.default_dir() == tmp_path / "xdg" / "executorch-conformance" / "lowerings"
    monkeypatch.setenv(lc.DIR_ENV, str(tmp_path / "mine"))
    assert lc.default_dir() == tmp_path / "mine"
    monkeypatch.setenv(lc.MAX_BYTES_ENV, "512M")
    assert lc.default_max_bytes() == 512 << 20
    monkeypatch.setenv(lc.MAX_BYTES_ENV, "lots")
    assert lc.default_max_bytes() == lc.DEFAULT_MAX_BYTES


def test_the_run_options_choose_how_the_cache_is_used():
    assert RunOptions(backend="B").lowering_cache().read
    certify = RunOptions(backend="B", certify=True).lowering_cache()
    assert certify is not None and not certify.read  # writes what it lowers, reuses nothing
    assert RunOptions(backend="B", no_cache=True).lowering_cache() is None
    assert "--et-no-cache" in RunOptions(backend="B", no_cache=True, entry="cli").pytest_args()


# --------------------------------------------------------------------------- the fingerprint


def _package(root: Path, name: str) -> Path:
    pkg = root / name
    (pkg / "lib").mkdir(parents=True)
    (pkg / "include").mkdir()
    (pkg / "__init__.py").write_text("VALUE = 1\n")
    (pkg / "partitioner.py").write_text("class P:\n    pass\n")
    (pkg / "lib" / "libtiny_runtime.so").write_bytes(b"\x7fELF runtime v1")
    (pkg / "lib" / "libtiny.a").write_bytes(b"!<arch> v1")
    (pkg / "include" / "tiny.h").write_text("int v1;\n")
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "partitioner.cpython-311.pyc").write_bytes(b"bytecode v1")
    return pkg


def _rebuild_cpp(pkg: Path, n: int) -> None:
    (pkg / "lib" / "libtiny_runtime.so").write_bytes(f"\x7fELF runtime v{n}".encode())
    (pkg / "lib" / "libtiny.a").write_bytes(f"!<arch> v{n}".encode())
    (pkg / "include" / "tiny.h").write_text(f"int v{n};\n")
    (pkg / "__pycache__" / "partitioner.cpython-311.pyc").write_bytes(f"bytecode v{n}".encode())


def test_a_cpp_only_change_keeps_the_fingerprint_of_a_package_on_the_path(tmp_path, monkeypatch):
    """An editable install or PYTHONPATH: the package's files are hashed, the runtime library and the
    C++ build files left out."""
    pkg = _package(tmp_path, "tiny_vendor_src")
    monkeypatch.syspath_prepend(str(tmp_path))
    runtime = {os.path.realpath(pkg / "lib" / "libtiny_runtime.so")}
    before = fp.package_digest("tiny_vendor_src", runtime, {})
    _rebuild_cpp(pkg, 2)
    assert fp.package_digest("tiny_vendor_src", runtime, {}) == before
    (pkg / "partitioner.py").write_text("class P:\n    pass  # changed\n")
    assert fp.package_digest("tiny_vendor_src", runtime, {}) != before


def _install_wheel(site: Path, name: str, files: dict[str, bytes]) -> None:
    """Installs ``files`` as pip installs a wheel: the files, and a dist-info with their RECORD hashes."""
    import base64

    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = []
    for rel, data in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{rel},sha256={digest},{len(data)}")
    lines += [f"{name}/__pycache__/partitioner.cpython-311.pyc,,", f"{name}-1.0.dist-info/RECORD,,"]
    (info / "RECORD").write_text("\n".join(lines) + "\n")


def test_a_cpp_only_reinstall_keeps_the_fingerprint_of_a_wheel_and_a_py_change_does_not(
    tmp_path, monkeypatch
):
    """A regular wheel install: its RECORD hashes, the runtime library's line and the C++ build files'
    left out (a copy made here, not the real reference backend)."""
    site = tmp_path / "site"
    name = "tiny_vendor_whl"

    def files(cpp: int, py: str) -> dict[str, bytes]:
        return {
            f"{name}/__init__.py": b"",
            f"{name}/partitioner.py": py.encode(),
            f"{name}/lib/libtiny_runtime.so": f"runtime v{cpp}".encode(),
            f"{name}/lib/libtiny.a": f"archive v{cpp}".encode(),
            f"{name}/include/tiny.h": f"int v{cpp};".encode(),
            f"{name}/lib/cmake/Tiny/TinyTargets.cmake": f"# v{cpp}".encode(),
        }

    _install_wheel(site, name, files(1, "class P: pass\n"))
    monkeypatch.syspath_prepend(str(site))
    runtime = {os.path.realpath(site / name / "lib" / "libtiny_runtime.so")}
    owners = {name: [name]}
    before = fp.package_digest(name, runtime, owners)
    _install_wheel(site, name, files(2, "class P: pass\n"))  # --force-reinstall after a C++ change
    assert fp.package_digest(name, runtime, owners) == before
    _install_wheel(site, name, files(2, "class P: pass  # new\n"))
    assert fp.package_digest(name, runtime, owners) != before


# --------------------------------------------------------------------------- real lowerings


@pytest.fixture(scope="module")
def reference():
    from conformance.descriptor import load_descriptor

    return load_descriptor(REFERENCE)


def _context(descriptor, cache: LoweringCache | None, spec: str = REFERENCE) -> Context:
    return Context(descriptor, spec, timeout=600, lowering_cache=cache)


@pytest.fixture
def lower_calls(monkeypatch):
    """The lowering tasks that really ran in any vendor process (a cache hit runs none)."""
    calls: list[str] = []
    original = VendorProcess.call

    def call(self, task, *args, **kwargs):
        if lc.cacheable(task, args):
            calls.append(task)
        return original(self, task, *args, **kwargs)

    monkeypatch.setattr(VendorProcess, "call", call)
    return calls


@pytest.mark.full  # real lowerings in two vendor processes (CI keeps it; the default tier: the unit tests)
def test_a_warm_cache_stands_for_the_lowering_and_aot5_still_lowers_twice(reference, tmp_path, lower_calls):
    from conformance.checks.aot import preprocess_deterministic

    cache_dir = tmp_path / "cache"
    names = [m.name for m in reference.sample_models if m.delegated]
    cold = _context(reference, LoweringCache(cache_dir))
    try:
        made = {name: cold.lowered(name) for name in names}
    finally:
        cold.close()
    assert lower_calls == [tasks.LOWER] * len(names) and cold.cached_lowerings == 0
    assert len(list(cache_dir.rglob("*.entry"))) == len(names)

    lower_calls.clear()
    warm = _context(reference, LoweringCache(cache_dir))
    try:
        assert warm.lowered(names[0]).pte == made[names[0]].pte  # the same bytes, no lowering
        assert lower_calls == [] and warm.cached_lowerings == 1
        warm.start_check("AOT-5")
        preprocess_deterministic(warm)  # lowers each sample again, and the first in a new process, for real
        assert lower_calls == [tasks.LOWER] * (len(names) + 1), lower_calls
        assert warm.cached_lowerings == len(names)  # the first lowerings it compares them with: cached
    finally:
        warm.close()


def _poison(cache_dir: Path) -> None:
    """Replaces every entry by a lowering whose program is not the real one."""
    cache = LoweringCache(cache_dir)
    for entry in list(cache_dir.rglob("*.entry")):
        address = entry.name.removesuffix(lc.SUFFIX)
        found = cache.get(address)
        assert found is not None
        cache.put_result(address, dataclasses.replace(found[1], pte=b"poisoned"))


@pytest.mark.full  # whole runs: CI keeps the warm-cache run
def test_no_cache_and_a_certify_run_never_read_the_cache(reference, tmp_path, lower_calls):
    cache_dir = tmp_path / "cache"
    name = reference.sample_models[0].name
    first = _context(reference, LoweringCache(cache_dir))
    try:
        first.lowered(name)
    finally:
        first.close()
    _poison(cache_dir)
    reading = _context(reference, LoweringCache(cache_dir))
    try:
        assert reading.lowered(name).pte == b"poisoned"  # what a reading run would take
    finally:
        reading.close()
    for cache in (None, RunOptions(backend=REFERENCE, certify=True).lowering_cache()):
        if cache is not None:
            cache.directory = cache_dir
        lower_calls.clear()
        ctx = _context(reference, cache)
        try:
            assert ctx.lowered(name).pte != b"poisoned"
            assert lower_calls == [tasks.LOWER] and ctx.cached_lowerings == 0
        finally:
            ctx.close()
    # The certify run wrote what it lowered itself over the poisoned entry.
    repaired = _context(reference, LoweringCache(cache_dir))
    try:
        assert repaired.lowered(name).pte != b"poisoned"
    finally:
        repaired.close()


FAULTY = """
    import dataclasses
    import os

    from reference_backend.conformance import DESCRIPTOR as REFERENCE


    def make_partitioners():
        if os.environ.get("TINY_LOWERING_FAULT"):
            raise RuntimeError("the fault TINY_LOWERING_FAULT chose")
        return REFERENCE.make_partitioners()


    DESCRIPTOR = dataclasses.replace(
        REFERENCE, make_partitioners=make_partitioners, lowering_environment=frozenset({"TINY_LOWERING_FAULT"})
    )
"""


@pytest.mark.full  # whole runs: CI keeps the warm-cache run
def test_a_fault_chosen_by_the_environment_is_not_masked(tmp_path, monkeypatch, lower_calls):
    """A backend whose lowering reads an environment variable names it in lowering_environment: a
    lowering cached without the fault never stands for one with it, nor the other way round."""
    (tmp_path / "env_fault_vendor.py").write_text(textwrap.dedent(FAULTY))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    from conformance.descriptor import load_descriptor

    spec = "env_fault_vendor:DESCRIPTOR"
    monkeypatch.delenv("TINY_LOWERING_FAULT", raising=False)
    descriptor = load_descriptor(spec)
    name = descriptor.sample_models[0].name
    cache_dir = tmp_path / "cache"

    def lowering() -> Lowering:
        ctx = _context(descriptor, LoweringCache(cache_dir), spec)
        try:
            return ctx.lowering(name)
        except CheckFailed as exc:
            return Lowering(None, (), {}, {}, error=str(exc))
        finally:
            ctx.close()

    assert lowering().error is None
    monkeypatch.setenv("TINY_LOWERING_FAULT", "1")
    faulty = lowering()
    assert faulty.error is not None and "TINY_LOWERING_FAULT chose" in faulty.error
    assert lowering().error == faulty.error  # the fault's own entry
    monkeypatch.delenv("TINY_LOWERING_FAULT")
    lower_calls.clear()
    assert lowering().error is None and lower_calls == []  # the clean entry again, from the cache


# --------------------------------------------------------------------------- whole runs


@pytest.mark.full
def test_a_second_run_takes_its_lowerings_from_the_cache_and_no_cache_lowers(tmp_path):
    env = {lc.DIR_ENV: str(tmp_path / "cache")}
    runs = {}
    for label, extra in (("cold", ()), ("warm", ()), ("off", ("--no-cache",))):
        code, report, output = run_suite(
            tmp_path / label, "ReferenceBackend", "--checks", "AOT-2,AOT-5", *extra, env=env
        )
        assert code == 0 and report is not None, output
        runs[label] = report["options"]
    assert runs["cold"]["lowering_cache"] == "on" and runs["cold"]["cached_lowerings"] == 0
    assert runs["warm"]["cached_lowerings"] >= 1
    assert runs["off"]["lowering_cache"] == "off" and runs["off"]["cached_lowerings"] == 0
