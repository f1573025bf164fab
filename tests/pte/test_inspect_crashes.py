"""``executorch-conformance inspect`` on programs that take ExecuTorch's own
loader down: the load runs in a child process, and the CLI reports the crash
(or the exception the loader let out) and exits normally."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "1.5.1" / "reference.pte"


def inspect(*args) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", "inspect", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


GOLDEN_1_0_1 = REPO / "tests" / "golden" / "1.0.1" / "reference.pte"


def test_an_abort_inside_executorchs_loader_is_reported_and_inspect_lives(tmp_path):
    """Two bytes of the 1.0.1 golden's flatbuffer (a table offset at 184, found
    by reference_backend/fuzz/pte_mutation_fuzzer.py) cleared: the suite's
    reader still reads it, ExecuTorch 1.5.1's loader asserts ("Missing
    non_const_buffer_sizes field", CheckOk) and aborts."""
    data = bytearray(GOLDEN_1_0_1.read_bytes())
    assert (data[184], data[186]) == (0o40, 0o44)
    data[184] = data[186] = 0
    path = tmp_path / "abort.pte"
    path.write_bytes(bytes(data))
    result = inspect(path, "--load", "ReferenceBackend")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (
        "method 'forward': does NOT load: ExecuTorch's loader crashed with SIGABRT loading method 'forward'"
        in (result.stdout)
    ), result.stdout
    assert "runtime log: [program.cpp" in result.stdout


def test_inspect_still_reports_a_loadable_program(tmp_path):
    if not GOLDEN.is_file():
        pytest.skip("no golden reference.pte for executorch 1.5.1")
    result = inspect(GOLDEN, "--load", "ReferenceBackend")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "loaded the runtime of ReferenceBackend" in result.stdout
    assert "method 'forward': loads (all delegates accepted)" in result.stdout
