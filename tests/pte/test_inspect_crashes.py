"""``executorch-conformance inspect`` on programs that take ExecuTorch's own
loader down: the load runs in a child process, and the CLI reports the crash
(or the exception the loader let out) and exits normally."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "1.5.1" / "reference.pte"


def inspect(*args) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance.cli", "inspect", *map(str, args)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)


def _with_backend_id_byte(pte: bytes, value: int) -> bytes:
    """The delegate's backend id in the flatbuffer with its first byte replaced
    (ExecuTorch 1.5.1 logs the id unescaped and its Python log sink aborts)."""
    ident = b"ReferenceBackend"
    needle = struct.pack("<I", len(ident)) + ident
    assert pte.count(needle) == 1
    at = pte.index(needle) + 4
    return pte[:at] + bytes([value]) + pte[at + 1 :]


def test_an_abort_inside_executorchs_loader_is_reported_and_inspect_lives(tmp_path):
    if not GOLDEN.is_file():
        pytest.skip("no golden reference.pte for executorch 1.5.1")
    path = tmp_path / "abort.pte"
    path.write_bytes(_with_backend_id_byte(GOLDEN.read_bytes(), 0xC9))
    result = inspect(path, "--load", "ReferenceBackend")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "method 'forward': does NOT load: ExecuTorch's loader crashed with SIGABRT loading method 'forward'" in (
        result.stdout), result.stdout


def test_inspect_still_reports_a_loadable_program_after_the_child_machinery(tmp_path):
    if not GOLDEN.is_file():
        pytest.skip("no golden reference.pte for executorch 1.5.1")
    result = inspect(GOLDEN, "--load", "ReferenceBackend")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "loaded the runtime of ReferenceBackend" in result.stdout
    assert "method 'forward': loads (all delegates accepted)" in result.stdout
