"""The kit's two implementations of the contract header, Python
(backend_kit.header) and C++ (backend_kit/header.h, compiled here into a
small program), against the committed vectors: same verdict, same log line,
same fields."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import backend_kit
from backend_kit import header

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "kit" / "vectors" / "blob_headers.json").read_text())
IDS = [v["name"] for v in VECTORS]
RT = header.RuntimeVersions(
    "ReferenceBackend", "executorch-reference-backend", (0, 4, 0), (1, 5, 1), 1, 0, 4, (0, 4, 0)
)


def _args(rt: header.RuntimeVersions) -> list[str]:
    v = lambda t: ".".join(map(str, t))  # noqa: E731
    return [
        rt.backend_id,
        rt.distribution,
        v(rt.backend_version),
        v(rt.executorch_version),
        str(rt.blob_format_major),
        str(rt.blob_format_minor_min),
        str(rt.blob_format_minor),
        v(rt.current_format_since),
    ]


@pytest.fixture(scope="module")
def cpp_judge(tmp_path_factory):
    """Compiles judge_vectors.cpp with -Wall -Wextra -Werror; returns a function blobs -> results."""
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.fail("no C++ compiler (c++ or $CXX) to build the kit's C++ header test")
    exe = tmp_path_factory.mktemp("kit-cpp") / "judge_vectors"
    proc = subprocess.run(
        [
            cxx,
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-O1",
            f"-I{backend_kit.include_dir()}",
            str(Path(__file__).with_name("judge_vectors.cpp")),
            "-o",
            str(exe),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr

    def run(blobs: list[bytes], rt: header.RuntimeVersions = RT) -> list[tuple[str, str, str]]:
        out = subprocess.run(
            [str(exe), *_args(rt)],
            input="".join(b.hex() + "\n" for b in blobs),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return [tuple(line.split("\t")) for line in out.splitlines()]

    return run


def _fields(h: header.Header) -> str:
    v = lambda t: ".".join(map(str, t))  # noqa: E731
    return (
        f"{h.header_length} {h.header_format_version} {v(h.blob_format)} {v(h.backend_version)} "
        f"{v(h.executorch_version)} {h.payload_size} {h.checksum} {h.backend_id}"
    )


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_python_decoder_matches_vector(vector):
    blob = bytes.fromhex(vector["blob"])
    if "decode_error" in vector:
        with pytest.raises(header.HeaderError, match=re.escape(vector["decode_error"])):
            header.decode(blob)
        return
    h = header.decode(blob)
    f = vector["fields"]
    assert (h.header_length, h.header_format_version) == (f["header_length"], f["header_format_version"])
    assert (list(h.blob_format), list(h.backend_version), list(h.executorch_version)) == (
        f["blob_format"],
        f["backend_version"],
        f["executorch_version"],
    )
    assert (h.payload_size, h.backend_id) == (f["payload_size"], f["backend_id"])


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_python_verdict_matches_vector(vector):
    j = header.judge(bytes.fromhex(vector["blob"]), RT)
    assert (j.verdict, j.message) == (vector["verdict"], vector["line"])


def test_cpp_verdicts_and_lines_match_every_vector(cpp_judge):
    results = cpp_judge([bytes.fromhex(v["blob"]) for v in VECTORS])
    assert len(results) == len(VECTORS)
    for vector, (verdict, line, fields) in zip(VECTORS, results):
        assert (verdict, line) == (vector["verdict"], vector["line"]), vector["name"]
        if "fields" in vector and verdict != "invalid":
            assert fields == _fields(header.decode(bytes.fromhex(vector["blob"]))), vector["name"]


u16 = st.integers(0, 0xFFFF)


@settings(max_examples=60, deadline=None)
@given(
    fmt=st.tuples(u16, u16),
    backend=st.tuples(u16, u16, u16),
    et=st.tuples(u16, u16, u16),
    payload=st.binary(max_size=32),
    flip=st.integers(-1, 400),
    ident=st.sampled_from(["ReferenceBackend", "Other", "é"]),
)
def test_cpp_and_python_agree_on_arbitrary_blobs(cpp_judge, fmt, backend, et, payload, flip, ident):
    """Round trip, then a possibly damaged copy: both sides give the same line."""
    blob = bytearray(header.encode(header.Header(ident, fmt, backend, et), payload))
    if 0 <= flip < len(blob) * 8:
        blob[flip // 8] ^= 1 << (flip % 8)
    elif flip >= 0:
        blob = blob[: flip % max(len(blob), 1)]
    ((verdict, line, fields),) = cpp_judge([bytes(blob)])
    j = header.judge(bytes(blob), RT)
    assert (verdict, line) == (j.verdict, j.message)
    if j.header is not None and j.verdict != "invalid":
        assert fields == _fields(j.header)


def test_checksum_is_zlib_crc32_of_header_with_zeroed_field_and_payload():
    """Header format 1 (still read): CRC-32."""
    blob = header.encode(
        header.Header("ReferenceBackend", (1, 1), (0, 1, 0), (1, 5, 1), header_format_version=1), b"payload"
    )
    h = header.decode(blob)
    assert h.checksum == zlib.crc32(blob[:32] + b"\0\0\0\0" + blob[36 : h.header_length] + b"payload")
    assert h.checksum == header.checksum(blob[: h.header_length], b"payload")


def test_format_2_checksum_is_crc32c_of_header_with_zeroed_field_and_payload():
    import crc32c

    blob = header.encode(
        header.Header("ReferenceBackend", (1, 2), (0, 2, 0), (1, 5, 1), memory_limit=99), b"payload"
    )
    h = header.decode(blob)
    assert (h.header_format_version, h.memory_limit) == (2, 99)
    assert h.checksum == crc32c.crc32c(blob[:32] + b"\0\0\0\0" + blob[36 : h.header_length] + b"payload")
    assert header.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value


def _run_kit_program(
    tmp_path, name: str, source: str, data: bytes, cases: list[tuple[int, ...]]
) -> list[str]:
    """Compiles ``source`` against the kit's headers (warnings are errors), runs it on a file holding
    ``data`` with every case's numbers as arguments, and returns its output lines."""
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    src, exe = tmp_path / f"{name}.cpp", tmp_path / name
    src.write_text(source)
    subprocess.run(
        [cxx, "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread"]
        + [f"-I{backend_kit.include_dir()}", str(src), "-o", str(exe)],
        check=True,
    )
    (tmp_path / "data").write_bytes(data)
    return subprocess.run(
        [str(exe), str(tmp_path / "data"), *(str(x) for c in cases for x in c)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")


def test_cpp_crc32c_hardware_and_portable_agree_with_python(tmp_path):
    """The SSE4.2 three-stream path (blocks of 3 x 4096 bytes), its tail, and
    the table path give the crc32c package's value at every length and alignment."""
    import random

    source = (
        "#include <backend_kit/header.h>\n#include <cstdio>\n#include <vector>\n"
        "int main(int argc, char** argv) {\n"
        '  FILE* f = std::fopen(argv[1], "rb"); std::vector<uint8_t> b(1 << 20);\n'
        "  size_t n = std::fread(b.data(), 1, b.size(), f); std::fclose(f);\n"
        "  for (int i = 2; i + 1 < argc; i += 2) {\n"
        "    size_t off = std::stoul(argv[i]), len = std::stoul(argv[i + 1]); if (off + len > n) return 3;\n"
        '    std::printf("%u %u %u\\n", backend_kit::crc32c(0, b.data() + off, len),\n'
        "                backend_kit::crc32c_portable(0, b.data() + off, len), backend_kit::crc32(0, b.data() + off, len));\n"
        "  }\n}\n"
    )
    rng = random.Random(7)
    data = rng.randbytes(1 << 20)
    cases = [(0, 0), (1, 7), (3, 12288), (5, 12289), (0, 36863), (7, 3 * 12288 + 77), (0, 1 << 19)]
    cases += [(rng.randrange(64), rng.randrange(200000)) for _ in range(20)]
    out = _run_kit_program(tmp_path, "crc", source, data, cases)
    for (off, n), line in zip(cases, out):
        hw, portable, crc = map(int, line.split())
        chunk = data[off : off + n]
        assert hw == portable == header.crc32c(chunk), (off, n)
        assert crc == zlib.crc32(chunk), (off, n)


def test_cpp_crc32c_combine_and_parallel_agree_with_python(tmp_path):
    """crc32c_combine joins the CRCs of two parts at every split; crc32c_parallel
    (<backend_kit/parallel_crc.h>) gives crc32c's value at sizes below, at and
    above its threshold, on more than one thread where the machine has them."""
    import random

    source = (
        "#include <backend_kit/parallel_crc.h>\n#include <cstdio>\n#include <string>\n#include <vector>\n"
        "int main(int argc, char** argv) {\n"
        '  FILE* f = std::fopen(argv[1], "rb"); std::vector<uint8_t> b(size_t{80} << 20);\n'
        "  size_t n = std::fread(b.data(), 1, b.size(), f); std::fclose(f);\n"
        '  static_assert(backend_kit::crc32c_combine(0, 0, 0) == 0, "constexpr");\n'
        "  for (int i = 2; i + 2 < argc; i += 3) {\n"
        "    size_t off = std::stoul(argv[i]), len = std::stoul(argv[i + 1]), cut = std::stoul(argv[i + 2]);\n"
        "    if (off + len > n || cut > len) return 3;\n"
        "    const uint8_t* p = b.data() + off;\n"
        "    uint32_t joined = backend_kit::crc32c_combine(backend_kit::crc32c(0, p, cut),\n"
        "                                                  backend_kit::crc32c(0, p + cut, len - cut), len - cut);\n"
        '    std::printf("%u %u %u\\n", backend_kit::crc32c_parallel(0, p, len), joined,\n'
        "                backend_kit::crc32c_parallel_threads(len));\n"
        "  }\n}\n"
    )
    rng = random.Random(11)
    data = rng.randbytes(80 << 20)
    mib = 1 << 20
    cases = [(0, 0, 0), (1, 100, 37), (0, 32 * mib - 1, 5), (3, 32 * mib, 16 * mib), (5, 80 * mib - 5, 1)]
    cases += [(0, 80 * mib, 80 * mib), (0, 48 * mib + 13, 48 * mib + 13)]
    cases += [
        (o, n, rng.randrange(n + 1))
        for o, n in ((rng.randrange(64), rng.randrange(1, 1 << 20)) for _ in range(8))
    ]
    out = _run_kit_program(tmp_path, "par", source, data, cases)
    threads_seen = set()
    for (off, n, cut), line in zip(cases, out):
        parallel, joined, threads = map(int, line.split())
        expected = header.crc32c(data[off : off + n])
        assert parallel == joined == expected, (off, n, cut)
        threads_seen.add(threads)
        if n < 32 * mib:
            assert threads == 1, (n, threads)
    if (os.cpu_count() or 1) >= 2:
        assert max(threads_seen) >= 2, "no case ran on more than one thread"


def test_encoder_rejects_values_that_do_not_fit():
    with pytest.raises(header.HeaderError, match="blob_format 70000"):
        header.encode(header.Header("ReferenceBackend", (70000, 0), (0, 1, 0), (1, 5, 1)), b"")
    with pytest.raises(header.HeaderError, match="1 to 255 bytes"):
        header.encode(header.Header("", (1, 1), (0, 1, 0), (1, 5, 1)), b"")


def test_import_needs_only_the_standard_library_and_packaging():
    """(and crc32c, imported on first use for header format 2)"""
    code = (
        "import sys, backend_kit, backend_kit.header, backend_kit.runtime; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('executorch', 'torch', 'numpy')); "
        "assert not bad, bad"
    )
    subprocess.run([os.sys.executable, "-c", code], check=True)


def test_cli_prints_the_cmake_dir():
    out = subprocess.run(
        [os.sys.executable, "-m", "backend_kit", "cmake-dir"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert (Path(out) / "BackendKitConfig.cmake").is_file()
    assert (backend_kit.include_dir() / "backend_kit" / "header.h").is_file()
