"""``executorch-conformance compat`` on bad input: one line on stderr naming what was wrong and what to
do, exit code 2, never a traceback or a hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "1.5.1" / "reference.pte"
RULES = REPO / "reference_backend" / "python" / "reference_backend" / "acceptance.json"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["compat", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _assert_one_line(code: int, err: str, *fragments: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.fixture
def truncated(tmp_path) -> Path:
    path = tmp_path / "truncated.pte"
    path.write_bytes(GOLDEN.read_bytes()[: GOLDEN.stat().st_size // 2])
    return path


@pytest.mark.parametrize(
    ("make", "fragments"),
    [
        (lambda d: d / "missing.pte", ["missing.pte: no such file"]),
        (lambda d: d, ["is a directory, not a .pte file"]),
        (lambda d: _write(d / "empty.pte", b""), ["not a readable .pte program", "export"]),
        (lambda d: _write(d / "text.pte", b"hello, not a program\n" * 20), ["not a readable .pte program"]),
    ],
    ids=["missing", "directory", "empty", "not-a-pte"],
)
def test_a_file_that_is_not_a_program(capsys, tmp_path, make, fragments):
    code, out, err = _run(capsys, str(make(tmp_path)), "--runtime", "1.4.1", "--rules", str(RULES))
    _assert_one_line(code, err, *fragments)
    assert out == ""


def test_a_truncated_program(capsys, truncated):
    code, _, err = _run(
        capsys,
        str(truncated),
        "--runtime",
        "1.4.1",
        "--backend",
        "ReferenceBackend==0.3.0",
        "--rules",
        str(RULES),
    )
    _assert_one_line(code, err, "truncated.pte is not a readable .pte program", "at offset")


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "model.pte"
    os.mkfifo(fifo)  # nobody writes to it: opening it for reading would block forever
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "compat", str(fifo), "--runtime", "1.4.1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    _assert_one_line(proc.returncode, proc.stderr, "is a FIFO, not a regular file")


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["--runtime", "1.4.x"], ["--runtime '1.4.x' is not an ExecuTorch release"]),
        (["--runtime", "1.4.1", "--backend", "ReferenceBackend=0.2.0"], ["is not BACKEND_ID==VERSION"]),
        (["--runtime", "1.4.1", "--backend", "ReferenceBackend==zero"], ["'zero' is not a version"]),
        (["--runtime", "1.4.1", "--backend", "==0.2.0"], ["is not BACKEND_ID==VERSION"]),
        (
            ["--runtime", "1.4.1", "--backend", "NoSuchBackend==1.0"],
            ["NoSuchBackend: no acceptance rules", "known:"],
        ),
        (
            ["--runtime", "1.4.1", "--backend", "ReferenceBackend"],
            ["give the version of its runtime", "0.1.0, 0.2.0, 0.3.0"],
        ),
        (
            [
                "--runtime",
                "1.4.1",
                "--backend",
                "ReferenceBackend==0.2.0",
                "--backend",
                "ReferenceBackend==0.3.0",
            ],
            ["given twice"],
        ),
        (
            ["--runtime", "1.4.1", "--backend", "XnnpackBackend==1.3.0"],
            ["ships inside ExecuTorch", "(1.4.1)"],
        ),
    ],
    ids=[
        "runtime",
        "backend-one-equals",
        "backend-version",
        "backend-no-id",
        "unknown-backend",
        "no-version",
        "twice",
        "xnnpack-version",
    ],
)
def test_malformed_arguments(capsys, argv, fragments):
    code, out, err = _run(capsys, str(GOLDEN), *argv, "--rules", str(RULES))
    assert out == ""
    _assert_one_line(code, err, *fragments)


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        (lambda r: "{not json", ["not readable JSON"]),
        (lambda r: {**r, "schema": 7}, ["schema: 1 was expected"]),
        (
            lambda r: {**r, "runtimes": {"0.3.0": {**r["runtimes"]["0.3.0"], "blob_format_minors": [3, 0]}}},
            ["[3, 0] is not a range"],
        ),
        (
            lambda r: {**r, "runtimes": {"zero": r["runtimes"]["0.3.0"]}},
            ["runtimes/zero", "'zero' is not a version"],
        ),
        (
            lambda r: {**r, "runtimes": {"0.3.0": {**r["runtimes"]["0.3.0"], "executorch": "about 1.5"}}},
            ["is not a version range"],
        ),
        (
            lambda r: {**r, "runtimes": {"0.3.0": {**r["runtimes"]["0.3.0"], "header_formats": [1]}}},
            ["runtimes/0.3.0/header_formats"],
        ),
    ],
    ids=["not-json", "schema", "reversed-range", "bad-version", "bad-range", "short-list"],
)
def test_a_bad_rules_file(capsys, tmp_path, change, fragments):
    rules = change(json.loads(RULES.read_text()))
    path = tmp_path / "rules.json"
    path.write_text(rules if isinstance(rules, str) else json.dumps(rules))
    code, _, err = _run(
        capsys,
        str(GOLDEN),
        "--runtime",
        "1.4.1",
        "--backend",
        "ReferenceBackend==0.3.0",
        "--rules",
        str(path),
    )
    _assert_one_line(code, err, str(path), *fragments)
