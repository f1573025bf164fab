"""A loose sanity bound on memory: the runtime reads weights in place (in the
blob or in the .ptd), so a second program adds no private copy of them; a
second program that shares the .ptd adds no physical memory for them, while
one with its own weights in its blob adds them once (proportional set size).
The figures themselves come from benchmarks/named_data_memory.py."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

# The full tier (CI; bash scripts/test.sh --full): lowers and maps programs of hundreds of MiB
pytestmark = pytest.mark.full

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
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_second_program_sharing_the_ptd_adds_no_private_copy(exported):
    directory, weights = exported
    shared = measure(directory, "shared")
    inline = measure(directory, "inline")
    if "Pss" not in shared[1]:
        pytest.skip("this kernel has no /proc/self/smaps_rollup (Pss)")
    # No private (anonymous) copy either way: constants and named data are read in place.
    for steps in (shared, inline):
        assert steps[2]["RssAnon"] - steps[1]["RssAnon"] < 0.25 * weights, steps
    # Physical memory: the second inline program maps its own weights (the measurement sees them) ...
    assert inline[2]["Pss"] - inline[1]["Pss"] > 0.9 * weights, inline
    # ... while the second shared program maps the same .ptd pages again, which costs nothing.
    assert shared[2]["Pss"] - shared[1]["Pss"] < 0.25 * weights, shared
