"""``backend_kit.identity``: a backend's identity and operator table, stated once in its Python package,
become the C++ header its runtime includes; what is not stated as literals the way the module documents is
an error naming the file and the name. The template's runtime is built from such a header
(tests/kit/test_new_backend.py builds it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from backend_kit.identity import IdentityError, enumerator, header, identity, main, operators

TEMPLATE = (
    Path(__file__).resolve().parents[2] / "kit" / "backend_kit" / "template" / "python" / "template_backend"
)
VERSION = (
    '__version__ = "1.2.3"\nBACKEND_ID = "AcmeNpuBackend"\nDISTRIBUTION = "acme-npu"\nBLOB_FORMAT = (2, 5)\n'
)


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_header_states_the_python_values_as_cpp_constants(tmp_path):
    ops = _file(tmp_path, "ops.py", 'OPS = {"aten::add.Tensor": 3, "aten::neg": 1}\n')
    text = header(_file(tmp_path, "version.py", VERSION), ops)
    for line in (
        'constexpr const char* kBackendId = "AcmeNpuBackend";',
        'constexpr const char* kDistribution = "acme-npu";',
        'constexpr const char* kVersion = "1.2.3";',
        "constexpr uint16_t kBlobFormatMajor = 2;",
        "constexpr uint16_t kBlobFormatMinor = 5;",
        "enum Op : uint32_t { kAtenAddTensor = 3, kAtenNeg = 1 };",
    ):
        assert line in text.splitlines(), text


def test_the_templates_own_modules_make_a_header_that_compiles(tmp_path):
    out = tmp_path / "backend_identity.h"
    assert main([str(TEMPLATE / "version.py"), "--ops", str(TEMPLATE / "ops.py"), "--header", str(out)]) == 0
    source = _file(
        tmp_path,
        "use.cpp",
        '#include "backend_identity.h"\nint main() { return backend_identity::kAtenAbs - 2; }\n',
    )
    compiled = subprocess.run(
        ["c++", "-std=c++17", "-I", str(tmp_path), "-o", str(tmp_path / "use"), str(source)]
    )
    assert compiled.returncode == 0
    assert subprocess.run([str(tmp_path / "use")]).returncode == 0


def test_an_unchanged_header_is_not_written_again(tmp_path):
    version = _file(tmp_path, "version.py", VERSION)
    out, cmake = tmp_path / "h" / "backend_identity.h", tmp_path / "h" / "backend_identity.cmake"
    assert main([str(version), "--header", str(out), "--cmake", str(cmake)]) == 0
    assert cmake.read_text() == 'set(BACKEND_IDENTITY_VERSION "1.2.3")\n'
    before = out.stat().st_mtime_ns
    assert main([str(version), "--header", str(out)]) == 0
    assert out.stat().st_mtime_ns == before


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (VERSION.replace('"1.2.3"', "get_version()"), r"__version__ must be assigned a literal"),
        (VERSION.replace('DISTRIBUTION = "acme-npu"\n', ""), r"DISTRIBUTION must be assigned a literal"),
        (VERSION.replace('"1.2.3"', '"1.2"'), r"__version__ = '1.2' is not a version string x.y.z"),
        (VERSION.replace('"AcmeNpuBackend"', '"Acme Npu"'), r"BACKEND_ID = 'Acme Npu' is not an identifier"),
        (VERSION.replace('"acme-npu"', '"acme\\"npu"'), r"DISTRIBUTION = .* is not a distribution name"),
        (VERSION.replace("(2, 5)", "(2, 70000)"), r"BLOB_FORMAT = \(2, 70000\) is not a \(major, minor\)"),
        ("def broken(:\n", r"cannot read it as Python"),
    ],
)
def test_a_wrong_version_module_is_an_error_naming_the_file_and_the_name(tmp_path, text, says):
    path = _file(tmp_path, "version.py", text)
    with pytest.raises(IdentityError, match=rf"version.py: .*{says}|{says}"):
        identity(path)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('OPS = {"aten::neg": 1, "aten::abs": 1}\n', r"the same opcode: 1"),
        ('OPS = {"aten::add.Tensor": 1, "aten::add_Tensor": 2}\n', r"the same enumerator: kAtenAddTensor"),
        ('OPS = {"aten::neg": -1}\n', r"unsigned 32-bit"),
        ("OPS = dict(neg=1)\n", r"OPS must be assigned a literal"),
    ],
)
def test_a_wrong_operator_table_is_an_error(tmp_path, text, says):
    with pytest.raises(IdentityError, match=says):
        operators(_file(tmp_path, "ops.py", text))


def test_the_command_says_what_is_wrong_in_one_line_and_exits_2(tmp_path):
    version = _file(tmp_path, "version.py", VERSION.replace("(2, 5)", "[2]"))
    proc = subprocess.run(
        [sys.executable, "-m", "backend_kit.identity", str(version), "--header", str(tmp_path / "x.h")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"backend_kit.identity: {version}: BLOB_FORMAT = [2] is not")
    assert not (tmp_path / "x.h").exists()


def test_an_enumerator_is_the_schema_name_in_camel_case():
    assert enumerator("aten::neg") == "kAtenNeg"
    assert enumerator("aten::max_pool2d_with_indices.default") == "kAtenMaxPool2dWithIndicesDefault"
    assert enumerator("quantized_decomposed::quantize_per_tensor") == "kQuantizedDecomposedQuantizePerTensor"
