"""``executorch-conformance abi diff`` / ``abi check``: verdicts, messages and exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from conformance.cli import main

REFERENCE_LIB = (
    Path(sysconfig.get_paths()["purelib"]) / "reference_backend/lib/libreference_backend_runtime.so"
)
needs_gxx = pytest.mark.skipif(
    shutil.which("g++") is None, reason="g++ is needed to build the test libraries"
)
needs_reference = pytest.mark.skipif(
    not REFERENCE_LIB.exists(), reason=f"{REFERENCE_LIB} missing: run scripts/bootstrap.sh"
)


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["abi", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


ET_LIB = Path(sysconfig.get_paths()["purelib"]) / "executorch/lib"


def build_so(tmp_path: Path, name: str, source: str, *link: str) -> Path:
    src = tmp_path / f"{name}.cpp"
    src.write_text(source)
    lib = tmp_path / f"lib{name}.so"
    subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-shared",
            "-fPIC",
            str(src),
            "-o",
            str(lib),
            "-Wl,--unresolved-symbols=ignore-all",
            *link,
        ],
        check=True,
        capture_output=True,
    )
    return lib


def test_abi_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["abi", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "diff" in out and "check" in out and "Exit codes" in out


def test_diff_cli_exit_codes(capsys):
    code, out, _ = run(capsys, "diff", "1.5.0", "1.5.1")
    assert code == 0 and "verdict: no changes" in out
    code, out, _ = run(capsys, "diff", "1.3.1", "1.5.1")
    assert code == 1 and "vtable changed [breaking]" in out and "MemoryAllocator" in out
    code, out, _ = run(capsys, "diff", "1.4.1", "1.5.0", "--json")
    doc = json.loads(out)
    assert code == doc["exit_code"] == 1
    assert {"runtime library changed", "symbol added"} == {c["category"] for c in doc["changes"]}


def test_diff_unknown_release(capsys):
    code, _, err = run(capsys, "diff", "1.5.0", "9.9.9")
    assert code == 2 and "no ABI baseline for executorch 9.9.9" in err and "1.5.1" in err


@needs_reference
def test_reference_library_verdicts(capsys):
    code, out, _ = run(capsys, "check", str(REFERENCE_LIB), "--against", "1.4.1", "1.5.0", "1.5.1", "--json")
    doc = json.loads(out)
    verdicts = {v["release"]: v for v in doc["verdicts"]}
    assert doc["built_against"] == "1.5.1"
    assert verdicts["1.5.1"]["verdict"] == "binary compatible", verdicts["1.5.1"]
    assert verdicts["1.5.0"]["verdict"] == "binary compatible", verdicts["1.5.0"]
    assert verdicts["1.4.1"]["verdict"] == "must rebuild"
    assert any("libexecutorch.so" in r for r in verdicts["1.4.1"]["reasons"])
    assert "BackendInterface" in doc["used_types"]
    assert code == 1  # not compatible with every release given


@needs_reference
def test_reference_library_table_is_current(capsys):
    from abi_checks.diff import available_releases

    _code, out, _ = run(capsys, "check", str(REFERENCE_LIB), "--against", *available_releases())
    table = Path(__file__).resolve().parents[2] / "abi_checks/reference_backend_table.md"
    stored = table.read_text()
    for line in out.splitlines():
        if line.startswith("| 1."):
            assert line in stored, f"{table} is stale; regenerate it (its command is at its top):\n{line}"


@needs_gxx
def test_crafted_library_missing_symbol(tmp_path, capsys):
    lib = build_so(
        tmp_path,
        "crafted",
        """
namespace executorch { namespace runtime {
struct Backend;
void nonexistent_function();
int register_backend(const Backend&);
} }
extern "C" int crafted_entry(const executorch::runtime::Backend& b) {
  executorch::runtime::nonexistent_function();
  return executorch::runtime::register_backend(b);
}
""",
        f"-L{ET_LIB}",
        "-Wl,--no-as-needed",
        "-lexecutorch",
    )
    code, out, _ = run(capsys, "check", str(lib), "--against", "1.5.1", "--built-against", "1.5.1")
    assert code == 1
    row = next(line for line in out.splitlines() if line.startswith("| 1.5.1"))
    assert "must rebuild" in row
    assert "missing symbol executorch::runtime::nonexistent_function(): no library it loads exports it" in row
    assert "executorch/lib/libexecutorch.so" in row  # what it does load
    assert "register_backend" not in row  # that one binds to libexecutorch.so


@needs_gxx
def test_an_import_without_the_needed_library_is_missing(tmp_path, capsys):
    """The runtime's libraries are loaded RTLD_LOCAL: a library that imports register_backend
    but does not NEED libexecutorch.so fails to load in the Python process."""
    lib = build_so(
        tmp_path,
        "noneeded",
        """
namespace executorch { namespace runtime { struct Backend; int register_backend(const Backend&); } }
extern "C" int entry(const executorch::runtime::Backend& b) { return executorch::runtime::register_backend(b); }
""",
    )
    code, out, _ = run(capsys, "check", str(lib), "--against", "1.5.1", "--built-against", "1.5.1")
    row = next(line for line in out.splitlines() if line.startswith("| 1.5.1"))
    assert code == 1 and "must rebuild" in row
    assert (
        "missing symbol executorch::runtime::register_backend(executorch::runtime::Backend const&): " in row
    )
    assert "no library it loads exports it (loaded: nothing)" in row


@needs_gxx
def test_library_with_no_executorch_imports(tmp_path, capsys):
    lib = build_so(tmp_path, "plain", 'extern "C" int plain(int x) { return x + 1; }\n')
    code, _, err = run(capsys, "check", str(lib), "--against", "1.5.1", "--built-against", "1.5.1")
    assert code == 3
    assert "imports no ExecuTorch symbols" in err and "not an ExecuTorch backend library" in err
    assert "statically" not in err  # the defined symbols tell: no guessing


def test_not_an_elf_file(tmp_path, capsys):
    f = tmp_path / "notes.so"
    f.write_text("not a library\n")
    code, _, err = run(capsys, "check", str(f), "--against", "1.5.1", "--built-against", "1.5.1")
    assert code == 2 and "is not an ELF file" in err


def test_a_fifo_is_refused_not_read(tmp_path, capsys):
    fifo = tmp_path / "libpipe.so"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "check", str(fifo), "--against", "1.5.1", "--built-against", "1.5.1")
    assert code == 2 and "is a FIFO, not a regular file" in err


def test_missing_file(tmp_path, capsys):
    code, _, err = run(capsys, "check", str(tmp_path / "absent.so"), "--against", "1.5.1")
    assert code == 2 and "no such file" in err


@needs_reference
def test_unknown_release(capsys):
    code, _, err = run(capsys, "check", str(REFERENCE_LIB), "--against", "0.9.0")
    assert code == 2 and "no ABI baseline for executorch 0.9.0" in err


@needs_gxx
def test_build_release_unknown(tmp_path, capsys):
    lib = build_so(
        tmp_path,
        "nobuildinfo",
        """
namespace executorch { namespace runtime { void runtime_abort(); } }
extern "C" void f() { executorch::runtime::runtime_abort(); }
""",
    )
    code, _, err = run(capsys, "check", str(lib), "--against", "1.5.1")
    assert code == 2 and "--built-against" in err and "build_info.json" in err


@needs_gxx
def test_a_weak_import_that_binds_nowhere_does_not_decide(tmp_path, capsys):
    lib = build_so(
        tmp_path,
        "weak",
        """
namespace executorch { namespace runtime {
struct Backend;
int register_backend(const Backend&);
__attribute__((weak)) void optional_hook();
} }
extern "C" int entry(const executorch::runtime::Backend& b) {
  if (executorch::runtime::optional_hook) executorch::runtime::optional_hook();
  return executorch::runtime::register_backend(b);
}
""",
        f"-L{ET_LIB}",
        "-Wl,--no-as-needed",
        "-lexecutorch",
    )
    code, out, _ = run(capsys, "check", str(lib), "--against", "1.5.1", "--built-against", "1.5.1", "--json")
    (v,) = json.loads(out)["verdicts"]
    assert code == 0 and v["verdict"] == "binary compatible", v
    assert (
        "weak import executorch::runtime::optional_hook() binds to nothing (allowed: weak, it is 0)"
        in v["notes"]
    )


@needs_gxx
def test_a_library_that_defines_a_whole_runtime_and_imports_nothing(tmp_path, capsys):
    """No ExecuTorch import at all: what it defines says it is a runtime of its own (no guessing)."""
    lib = build_so(
        tmp_path,
        "ownruntime",
        """
namespace executorch { namespace runtime {
struct Backend { const char* name; void* backend; };
class Program { public: static int load(void* loader); };
class Method { public: int execute(); };
static Backend table[16];
static int count = 0;
__attribute__((visibility("default"))) int register_backend(const Backend& b) { table[count++] = b; return 0; }
__attribute__((visibility("default"))) void* get_backend_class(const char*) { return table[0].backend; }
int Program::load(void*) { return 0; }
int Method::execute() { return 0; }
} }
""",
    )
    code, out, _ = run(capsys, "check", str(lib), "--against", "1.5.1", "--built-against", "1.5.1", "--json")
    doc = json.loads(out)
    (v,) = doc["verdicts"]
    assert code == 4 and v["verdict"] == "carries its own runtime", v
    assert doc["imports"] == {}
    assert (
        "Program::load" in doc["runtime_copy"]["evidence"] and "(exported)" in doc["runtime_copy"]["evidence"]
    )
    assert (
        "an ExecuTorch runtime of its own" in v["meaning"] and "cannot be handed to the other" in v["meaning"]
    )
