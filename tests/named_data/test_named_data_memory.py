"""A loose sanity bound on memory: a second program that shares the .ptd adds
no private copy of the weights, while one with the weights in its blob does.
The figures themselves come from benchmarks/named_data_memory.py."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "named_data_memory.py"
WIDTH = 1024


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("named_data_memory", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path_factory.mktemp("memory")
    sizes = bench.export(out, layers=2, width=WIDTH)  # 8 MiB of weights
    return out, sizes["weights_bytes"]


def measure(directory: Path, layout: str) -> list[dict]:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--width", str(WIDTH), "--measure", str(directory), layout],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_second_program_sharing_the_ptd_adds_no_private_copy(exported):
    directory, weights = exported
    shared = measure(directory, "shared")
    inline = measure(directory, "inline")
    second_shared = shared[2]["RssAnon"] - shared[1]["RssAnon"]
    second_inline = inline[2]["RssAnon"] - inline[1]["RssAnon"]
    assert second_inline > 0.9 * weights, inline  # the measurement sees a copy when there is one
    assert second_shared < 0.25 * weights, shared
