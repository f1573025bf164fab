"""``executorch-conformance inspect MODEL.pte``, run as a user runs it: in a
subprocess (``python -m conformance.cli inspect ...``), on the golden files in
tests/golden/ (see tests/golden/README.md)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.inspection.blob_header import read_header, with_blob_format
from conformance.inspection.forge import replace_delegate_data
from conformance.pte import PteFormatError, read_pte

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
BACKEND_ID = "ReferenceBackend"


def _installed_executorch() -> str | None:
    try:
        from executorch.version import __version__
    except ImportError:
        return None
    return __version__.split("+")[0]


def _golden_releases() -> list[str]:
    return sorted(
        (p.name for p in GOLDEN.iterdir() if (p / "reference.pte").is_file()),
        key=lambda r: tuple(int(x) for x in r.split(".")),
    )


@pytest.fixture(scope="module")
def golden_reference() -> Path:
    """The golden reference.pte of the installed executorch release."""
    current = _installed_executorch()
    if current is None:
        pytest.skip("executorch is not installed")
    path = GOLDEN / current / "reference.pte"
    if not path.is_file():
        pytest.skip(f"no golden reference.pte for executorch {current} (tests/golden/make_all.sh)")
    return path


def inspect(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", "inspect", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _version(triple) -> str:
    return ".".join(map(str, triple))


def test_inspect_loads_the_golden_with_its_runtime(golden_reference):
    result = inspect(golden_reference, "--load", BACKEND_ID)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    header = read_header(read_pte(golden_reference).delegates()[0].data)
    assert f"delegate 0: {BACKEND_ID}" in out
    assert "blob_format = '1.1' (3 bytes)" in out  # the compile spec
    assert (
        f"forward[0] {BACKEND_ID}: contract header: backend {BACKEND_ID}, "
        f"blob format {_version(header.blob_format)}, written by {_version(header.backend_version)} "
        f"with executorch {_installed_executorch()}, payload {header.payload_size} bytes"
    ) in out
    assert f"loaded the runtime of {BACKEND_ID}" in out
    registered = next(line for line in out.splitlines() if line.startswith("registered backends:"))
    assert BACKEND_ID in registered
    assert "method 'forward': loads (all delegates accepted)" in out


@pytest.mark.full  # a second golden through the runtime: full tier
def test_inspect_reads_the_oldest_golden(golden_reference):
    """A file written by the oldest release with a golden: same id, its own executorch version."""
    oldest = _golden_releases()[0]
    path = GOLDEN / oldest / "reference.pte"
    recorded = json.loads((GOLDEN / oldest / "manifest.json").read_text())["executorch_version"]
    result = inspect(path, "--load", BACKEND_ID)
    assert result.returncode == 0, result.stderr
    assert f"delegate 0: {BACKEND_ID}" in result.stdout
    assert f"with executorch {recorded.split('+')[0]}, payload" in result.stdout
    assert "method 'forward': loads (all delegates accepted)" in result.stdout


def test_inspect_reports_a_blob_the_runtime_refuses(golden_reference, tmp_path):
    data = golden_reference.read_bytes()
    delegate = read_pte(data).delegates()[0]
    forged = tmp_path / "format-2.1.pte"
    forged.write_bytes(replace_delegate_data(data, delegate, with_blob_format(delegate.data, 2, 1)))

    result = inspect(forged, "--load", BACKEND_ID)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"contract header: backend {BACKEND_ID}, blob format 2.1," in out
    assert "method 'forward': does NOT load:" in out
    log = [line for line in out.splitlines() if line.startswith("    runtime log:")]
    assert any(BACKEND_ID in line and "format 2.1" in line for line in log), out
    assert "loads (all delegates accepted)" not in out


def test_inspect_without_load_says_the_backend_is_not_registered(golden_reference):
    result = inspect(golden_reference)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    registered = next(line for line in out.splitlines() if line.startswith("registered backends:"))
    assert BACKEND_ID not in registered
    assert "method 'forward': does NOT load:" in out
    assert f"backend {BACKEND_ID}: NOT registered in this process (load its runtime first)" in out
    # The runtime's own log line says it too.
    assert any(
        line.startswith("    runtime log:") and f"Backend {BACKEND_ID} is not registered" in line
        for line in out.splitlines()
    ), out


def _garbage() -> bytes:
    rng = random.Random(1234)
    return bytes(rng.randrange(256) for _ in range(300))


@pytest.mark.parametrize("cut", [3, 500, 1500, "garbage"])
def test_inspect_rejects_a_malformed_file_cleanly(golden_reference, tmp_path, cut):
    data = golden_reference.read_bytes()
    bad = _garbage() if cut == "garbage" else data[:cut]
    with pytest.raises(PteFormatError) as expected:
        read_pte(bad)
    path = tmp_path / "bad.pte"
    path.write_bytes(bad)

    result = inspect(path, "--load", BACKEND_ID)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr + result.stdout
    assert str(expected.value) in result.stderr
    assert f"offset {expected.value.offset}" in result.stderr
    assert result.stdout == ""


def test_inspect_missing_file_is_a_clean_error(tmp_path):
    result = inspect(tmp_path / "absent.pte")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "absent.pte" in result.stderr
