"""A grid cell that crashes or hangs its child process is recorded as such, and
the batch goes on with the next case (matrix/cells.py)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from matrix import cells

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "1.5.1"

# A stand-in for matrix.grid_case: the program's name says what to do.
FAKE_CHILD = textwrap.dedent("""
    import json, os, signal, sys, time
    batch = json.load(open(sys.argv[sys.argv.index("--batch") + 1]))
    for i, (program, manifest) in enumerate(batch):
        print(f"@@case {i}", file=sys.stderr, flush=True)
        print(f"@@case {i}", flush=True)
        print(f"[backend.cpp:1] ReferenceBackend: case {program}", file=sys.stderr, flush=True)
        if program.endswith("segv.pte"):
            os.kill(os.getpid(), signal.SIGSEGV)
        if program.endswith("hang.pte"):
            time.sleep(60)
        print(json.dumps({"status": "runs and matches", "detail": "ok", "max_deviation": 0.0, "index": i}), flush=True)
""")


def test_a_crash_is_a_result_and_the_batch_resumes(tmp_path):
    fake = tmp_path / "fake_child.py"
    fake.write_text(FAKE_CHILD)
    cases = [
        (GOLDEN / "reference.pte", GOLDEN / "manifest.json"),
        (tmp_path / "segv.pte", GOLDEN / "manifest.json"),
        (GOLDEN / "xnnpack.pte", GOLDEN / "manifest.json"),
    ]
    got = cells.run_cases(cases, None, child=[sys.executable, str(fake)])
    assert [c["status"] for c in got] == ["runs and matches", "crashed", "runs and matches"]
    assert got[1]["detail"] == "crashed with SIGSEGV"
    assert got[1]["log"] == [f"[backend.cpp:1] ReferenceBackend: case {tmp_path / 'segv.pte'}"]
    assert got[2]["log"] == [f"[backend.cpp:1] ReferenceBackend: case {GOLDEN / 'xnnpack.pte'}"]
    assert got[0]["command"] == (
        "python -m matrix.grid_case tests/golden/1.5.1/reference.pte "
        "--expected tests/golden/1.5.1/manifest.json"
    )


def test_a_hang_is_a_result(tmp_path, monkeypatch):
    monkeypatch.setattr(cells, "CASE_TIMEOUT", 2)
    fake = tmp_path / "fake_child.py"
    fake.write_text(FAKE_CHILD)
    cases = [
        (tmp_path / "hang.pte", GOLDEN / "manifest.json"),
        (GOLDEN / "xnnpack.pte", GOLDEN / "manifest.json"),
    ]
    got = cells.run_cases(cases, None, child=[sys.executable, str(fake)])
    assert [c["status"] for c in got] == ["hung", "runs and matches"]
    assert got[0]["detail"].startswith("no result within 4 s")
