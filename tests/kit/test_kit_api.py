"""The kit's API for what backends used to write themselves: BlobWriter (the
header preprocess() writes), version_triple, RuntimeLibrary (a package's
runtime library), AdapterPartitioner, and the C++ init() helpers
(backend_kit/backend.h, adapter.h), compiled strictly against the wheel."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import backend_kit
from backend_kit.aot import BlobWriter
from backend_kit.header import HeaderError, decode, payload_of, version_triple
from backend_kit.runtime import RuntimeLibrary, RuntimeLoadError


def test_blob_writer_writes_the_running_executorch_s_version():
    from executorch.version import __version__

    blob = BlobWriter("KitBackend", blob_format=(1, 2), version="0.5.7").blob(b"payload!")
    header = decode(blob)
    assert header.backend_id == "KitBackend" and header.blob_format == (1, 2)
    assert header.backend_version == (0, 5, 7)
    assert header.executorch_version == version_triple(__version__)
    assert bytes(payload_of(blob)) == b"payload!"


def test_blob_writer_writes_the_extensions():
    blob = BlobWriter("KitBackend", (1, 0), "0.1.0").blob(
        b"x", memory_limit=4096, named_data_checksums=[1, 2]
    )
    header = decode(blob)
    assert header.memory_limit == 4096 and header.named_data_checksums == (1, 2)


@pytest.mark.parametrize(
    ("version", "blob_format", "says"),
    [
        ("zero.one", (1, 0), "'zero.one' is not a version (PEP 440, for example 0.1.0)"),
        (
            "0.70000.0",
            (1, 0),
            "version 0.70000.0: its minor number 70000 does not fit the header's u16 field",
        ),
        ("0.1.0", (1,), "blob_format (1,) is not (major, minor) of two u16 numbers"),
        ("0.1.0", (1, -1), "blob_format (1, -1) is not (major, minor)"),
    ],
)
def test_blob_writer_refuses_what_the_header_cannot_hold(version, blob_format, says):
    with pytest.raises(HeaderError) as caught:
        BlobWriter("KitBackend", blob_format, version)
    assert says in str(caught.value)


@pytest.mark.parametrize(
    ("text", "triple"),
    [("1.5.1+cpu", (1, 5, 1)), ("0.2", (0, 2, 0)), ("1.0.0rc1", (1, 0, 0)), ("3", (3, 0, 0))],
)
def test_version_triple(text, triple):
    assert version_triple(text) == triple


def test_runtime_library_names_and_overrides_its_library(tmp_path, monkeypatch):
    lib = RuntimeLibrary(
        "KitBackend", tmp_path / "lib" / "libkit.so", distribution="kit-backend", override_env="KIT_LIB"
    )
    monkeypatch.delenv("KIT_LIB", raising=False)
    assert lib.location() == tmp_path / "lib" / "libkit.so" and lib.libraries() == [lib.location()]
    monkeypatch.setenv("KIT_LIB", str(tmp_path / "sanitized.so"))
    assert lib.libraries() == [tmp_path / "sanitized.so"]


def test_runtime_library_refuses_a_missing_library_naming_the_fix(tmp_path):
    lib = RuntimeLibrary("KitBackend", tmp_path / "libkit.so", distribution="kit-backend")
    with pytest.raises(RuntimeLoadError) as caught:
        lib.load()
    assert (
        str(caught.value)
        == f"runtime library {tmp_path / 'libkit.so'} does not exist. Fix: reinstall kit-backend."
    )


def test_adapter_partitioner_retargets_only_the_wrapped_backend():
    from executorch.exir.backend.compile_spec_schema import CompileSpec
    from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult

    from backend_kit.adapter import AdapterPartitioner

    spec = [CompileSpec("k", b"v")]

    class TwoBackends(Partitioner):  # a vendor's partitioner that tags for two backends
        def partition(self, exported_program):
            tags = {"a": DelegationSpec("Wrapped", spec), "b": DelegationSpec("Other", [])}
            return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)

        def ops_to_not_decompose(self, ep):
            return (["kept"], None)

    inner = TwoBackends()
    adapter = AdapterPartitioner(inner, "Wrapped", "Adapter")
    result = adapter.partition("the program")
    assert result.tagged_exported_program == "the program"
    assert result.partition_tags == {"a": DelegationSpec("Adapter", spec), "b": DelegationSpec("Other", [])}
    assert adapter.ops_to_not_decompose(None) == (["kept"], None)


def test_the_cpp_helpers_compile_strictly_and_match_the_positional_spelling(tmp_path):
    import executorch

    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.fail("no C++ compiler (c++ or $CXX) to build the kit's C++ header test")
    et = Path(next(iter(executorch.__path__)))
    exe = tmp_path / "kit_headers"
    versions = {"BACKEND": (0, 5, 7), "EXECUTORCH": (1, 5, 1)}
    defines = [
        f"-DBACKEND_KIT_{what}_VERSION_{part}={value}"
        for what, triple in versions.items()
        for part, value in zip(("MAJOR", "MINOR", "PATCH"), triple)
    ]
    proc = subprocess.run(
        [
            cxx,
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-DC10_USING_CUSTOM_GENERATED_MACROS",
            *defines,
            f"-I{backend_kit.include_dir()}",
            f"-isystem{et / 'include'}",
            f"-isystem{et / 'include' / 'executorch' / 'runtime' / 'core' / 'portable_type' / 'c10'}",
            str(Path(__file__).with_name("kit_headers.cpp")),
            f"-L{et / 'lib'}",
            "-lexecutorch",
            f"-Wl,-rpath,{et / 'lib'}",
            "-o",
            str(exe),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_python_m_backend_kit_names_the_template():
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "backend_kit", "template-dir"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == backend_kit.template_dir()
    assert (backend_kit.template_dir() / "pyproject.toml").is_file()
