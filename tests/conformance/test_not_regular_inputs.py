"""Every command refuses a FIFO, a device or a directory where it reads a file, at once, naming what the
path is (conformance/input_files.py; docs/certification.md, "Bad input"). A FIFO nobody writes to is the
sharp case: an ``open`` for reading blocks forever, so a command that opens before it checks hangs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: Each command with the file argument that is replaced ({odd}); {report} and {key} are real files.
COMMANDS = {
    "inspect": ["inspect", "{odd}"],
    "run --expectations": [
        "run",
        "--backend",
        "ReferenceBackend",
        "--expectations",
        "{odd}",
        "--report-dir",
        "{tmp}/r",
    ],
    "verify --rerun --expectations": ["verify", "{report}", "--rerun", "--expectations", "{odd}"],
    "abi diff": ["abi", "diff", "{odd}", "1.5.1"],
    "abi check": ["abi", "check", "{odd}", "--against", "1.5.1", "--built-against", "1.5.1"],
    "check-wheel": ["check-wheel", "{odd}"],
    "page": ["page", "{odd}", "--out", "{tmp}/p.html"],
    "verify": ["verify", "{odd}"],
    "badge": ["badge", "{odd}", "--out-dir", "{tmp}"],
    "sign": ["sign", "{odd}", "--key", "{key}"],
    "sign --key": ["sign", "{report}", "--key", "{odd}"],
    "verify --trusted-key": ["verify", "{report}", "--trusted-key", "{odd}"],
    "compat": ["compat", "{odd}", "--runtime", "1.5.1", "--backend", "ReferenceBackend==0.4.0"],
    "compat --rules": [
        "compat",
        "{pte}",
        "--runtime",
        "1.5.1",
        "--backend",
        "ReferenceBackend==0.4.0",
        "--rules",
        "{odd}",
    ],
}

KINDS = {
    "fifo": "is a FIFO, not a regular file",
    "device": "is a character device",
    "directory": "is a directory",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    sys.path.insert(0, str(REPO / "tests" / "certification"))
    from templates import make_report

    from conformance.certification.attestation import generate_key

    tmp = tmp_path_factory.mktemp("inputs")
    report = tmp / "report.json"
    library = {"path": "/site-packages/x/libx.so", "sha256": "ab" * 32}
    report.write_text(
        json.dumps(make_report("standard", checks="PKG", libraries=[library])), encoding="utf-8"
    )
    key, _, _ = generate_key(tmp / "key.pem")
    os.mkfifo(tmp / "pipe")  # nobody ever writes to it
    (tmp / "dir").mkdir()
    pte = REPO / "tests" / "golden" / "1.5.1" / "reference.pte"  # a real program, for the --rules case
    assert pte.is_file(), pte
    return {"report": report, "key": Path(key), "tmp": tmp, "pte": pte}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_path_that_is_not_a_regular_file_is_refused_at_once(files, command, kind):
    odd = {"fifo": files["tmp"] / "pipe", "device": Path("/dev/zero"), "directory": files["tmp"] / "dir"}[
        kind
    ]
    args = [a.format(odd=odd, **files) for a in COMMANDS[command]]
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "conformance.cli", *args],
            capture_output=True,
            text=True,
            timeout=240,  # far more than any refusal takes; a hang on the FIFO would last forever
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command} with {kind} did not return in 240 s: it blocks instead of refusing")
    took = time.monotonic() - started
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0 and KINDS[kind] in output, (command, kind, output)
    assert "Traceback" not in output, output
    assert took < 60, f"{command} with {kind} took {took:.0f} s to refuse"
