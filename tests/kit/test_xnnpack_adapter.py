"""The XNNPACK conformance adapter (scoreboard/xnnpack_adapter/), built on the
kit's adapter halves: what it writes is XNNPACK's blob behind the contract
header with XNNPACK's named data and compile specs unchanged, what it runs is
bit-identical to plain XNNPACK, a forged or headerless blob is refused, and
the whole adapter is CERTIFIED by the suite (the full test)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from backend_kit.header import Header, decode, encode, payload_of
from conformance.inspection.forge import replace_delegate_data, with_header_fields
from conformance.pte import read_pte

# The full tier (CI; bash scripts/test.sh --full): builds the XNNPACK adapter and certifies it
pytestmark = pytest.mark.full

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "scoreboard" / "xnnpack_adapter"
DISTRIBUTION = "executorch-xnnpack-adapter"
BIN = Path(sys.executable).parent


def _pip(*args: object) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "pip", "--disable-pip-version-check", *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=1800)


def _source_version() -> str:
    text = (ADAPTER / "python" / "xnnpack_adapter" / "version.py").read_text()
    return text.split('__version__ = "', 1)[1].split('"', 1)[0]


@pytest.fixture(scope="module")
def adapter():
    """The adapter package, imported: the copy scripts/bootstrap.sh installs. Where it is missing it
    is built against this venv's executorch and installed (once, under a lock: pytest-xdist workers
    share the venv) and left installed, as bootstrap would have."""
    import fcntl
    import importlib
    import importlib.metadata

    lock_path = ROOT / "build" / "xnnpack-adapter-install.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            installed = importlib.metadata.version(DISTRIBUTION)
        except importlib.metadata.PackageNotFoundError:
            done = _pip("install", "-q", "--no-deps", "--no-build-isolation", ADAPTER)
            assert done.returncode == 0, done.stdout + done.stderr
            importlib.invalidate_caches()  # the import system caches site-packages' listing
            installed = importlib.metadata.version(DISTRIBUTION)
    assert installed == _source_version(), (
        f"{DISTRIBUTION} {installed} is installed, the source is {_source_version()}: reinstall it "
        "(pip install --no-build-isolation --force-reinstall --no-deps ./scoreboard/xnnpack_adapter)"
    )
    import xnnpack_adapter

    return xnnpack_adapter


def _lower(model, example, partitioner) -> bytes:
    from executorch.exir import to_edge_transform_and_lower

    return (
        to_edge_transform_and_lower(torch.export.export(model, example), partitioner=[partitioner])
        .to_executorch()
        .buffer
    )


def _named_data(pte: bytes) -> dict[str, bytes]:
    program = read_pte(pte)
    segments = {s.index: s for s in program.segments}
    out = {}
    for entry in program.named_data:
        s = segments[entry.segment_index]
        out[entry.key] = pte[s.file_offset : s.file_offset + s.size]
    return out


def _samples():
    from xnnpack_adapter.conformance import _MLP, _ConvNet

    torch.manual_seed(0)
    return [
        ("mlp", _MLP().eval(), (torch.randn(4, 16),)),
        ("conv_net", _ConvNet().eval(), (torch.randn(1, 3, 8, 8),)),
    ]


@pytest.fixture(scope="module")
def lowered(adapter):
    """name -> (model, example, .pte through the adapter, .pte through plain XnnpackPartitioner)."""
    from executorch.backends.xnnpack import XnnpackPartitioner

    return {
        name: (
            model,
            example,
            _lower(model, example, adapter.XnnpackAdapterPartitioner()),
            _lower(model, example, XnnpackPartitioner()),
        )
        for name, model, example in _samples()
    }


def test_the_blob_is_xnnpack_s_behind_the_contract_header(adapter, lowered):
    from executorch.version import __version__

    for name, (_, _, through, plain) in lowered.items():
        mine = read_pte(through).delegates()
        theirs = read_pte(plain).delegates()
        assert [d.backend_id for d in mine] == [adapter.BACKEND_ID] * len(theirs), name
        for a, x in zip(mine, theirs):
            header = decode(a.data)
            assert header.backend_id == "XnnpackAdapterBackend" and header.blob_format == (1, 0)
            assert header.executorch_version == tuple(int(v) for v in __version__.split("+")[0].split("."))
            assert bytes(payload_of(a.data)) == x.data, f"{name}: the payload is not XNNPACK's blob"
            assert x.data[4:8] == b"XH00"  # XNNPACK's own header, now the payload's first bytes
            assert a.compile_specs == x.compile_specs, f"{name}: compile specs differ"


def test_xnnpack_s_named_data_passes_through_unchanged(lowered):
    for name, (_, _, through, plain) in lowered.items():
        mine, theirs = _named_data(through), _named_data(plain)
        assert theirs, f"{name}: XNNPACK kept no weights as named data; the comparison would prove nothing"
        assert mine == theirs, name


def test_execute_is_bit_identical_to_plain_xnnpack(adapter, lowered, tmp_path):
    from executorch.runtime import Runtime

    adapter.load_runtime()
    runtime = Runtime.get()
    assert {"XnnpackAdapterBackend", "XnnpackBackend"} <= set(
        runtime.backend_registry.registered_backend_names
    )
    generator = torch.Generator().manual_seed(7)
    for name, (model, example, through, plain) in lowered.items():
        (tmp_path / f"{name}-adapter.pte").write_bytes(through)
        (tmp_path / f"{name}-xnnpack.pte").write_bytes(plain)
        mine = runtime.load_program(tmp_path / f"{name}-adapter.pte").load_method("forward")
        theirs = runtime.load_program(tmp_path / f"{name}-xnnpack.pte").load_method("forward")
        for _ in range(3):
            inputs = [torch.randn(t.shape, generator=generator) for t in example]
            (a,) = mine.execute(inputs)
            (x,) = theirs.execute(inputs)
            assert torch.equal(a, x), f"{name}: the adapter's output differs from XNNPACK's"
            torch.testing.assert_close(a, model(*inputs).detach(), rtol=1e-4, atol=1e-5)


#: The forged blobs, by case: a function (adapter blob, plain XNNPACK blob) -> the blob to load instead.
FORGERIES = {
    # RT-5's case: the header claims format 2.0 from a newer adapter release.
    "newer format": lambda blob, bare: with_header_fields(
        blob, blob_format=(2, 0), backend_version=(1, 0, 0)
    ),
    # One flipped bit of XNNPACK's blob, which XNNPACK itself would read.
    "corrupted payload": lambda blob, bare: blob[:-1] + bytes([blob[-1] ^ 0x01]),
    # XNNPACK's own blob under the adapter's id: no contract header (what BLOB-1 found before the adapter).
    "no header": lambda blob, bare: bare + b"\0" * (len(blob) - len(bare)),
    # A well-formed header naming another backend.
    "other backend": lambda blob, bare: encode(
        Header("XnnpackAdapterBackenX", *_versions(decode(blob))), payload_of(blob)
    ),
}


def _versions(h: Header) -> tuple:
    return h.blob_format, h.backend_version, h.executorch_version


@pytest.fixture(scope="module")
def refusals(adapter, lowered, tmp_path_factory) -> dict[str, tuple[str, str]]:
    """case -> (what loading the forged program raised, what the runtime logged meanwhile), all loaded
    in one fresh process, each after a marker line on stderr."""
    work = tmp_path_factory.mktemp("forged")
    _, _, through, plain = lowered["mlp"]
    (delegate,) = read_pte(through).delegates()
    (bare,) = read_pte(plain).delegates()
    for case, forge in FORGERIES.items():
        (work / f"{case}.pte").write_bytes(
            replace_delegate_data(through, delegate, forge(delegate.data, bare.data))
        )
    script = (
        "import sys, xnnpack_adapter\n"
        "from executorch.runtime import Runtime\n"
        "xnnpack_adapter.load_runtime()\n"
        f"for case in {list(FORGERIES)!r}:\n"
        "    print('@@', case, file=sys.stderr, flush=True)\n"
        "    try:\n"
        f"        Runtime.get().load_program({str(work)!r} + '/' + case + '.pte').load_method('forward')\n"
        "    except RuntimeError as exc:\n"
        "        print(case, '=', exc, flush=True)\n"
        "    else:\n"
        "        print(case, '= LOADED', flush=True)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900)
    errors = dict(line.split(" = ", 1) for line in proc.stdout.splitlines() if " = " in line)
    logs = {part.split("\n", 1)[0].strip(): part for part in proc.stderr.split("@@ ")[1:]}
    assert set(errors) == set(logs) == set(FORGERIES), proc.stdout + proc.stderr
    return {case: (errors[case], logs[case]) for case in FORGERIES}


def test_a_forged_header_is_refused_with_the_reason(refusals):
    """RT-5's case, as the adapter's runtime logs it: both formats, both releases, the fix."""
    error, log = refusals["newer format"]
    assert "0x:30" in error.replace(" ", ""), error
    assert "XnnpackAdapterBackend: incompatible blob: format 2.0, written by 1.0.0 with executorch" in log, (
        log
    )
    assert "runtime 0.1.0 for executorch" in log and "reads formats 1.0-1.0" in log, log
    assert "fix: use a runtime from executorch-xnnpack-adapter>=1.0.0" in log, log


def test_a_corrupted_payload_is_refused_before_xnnpack_reads_it(refusals):
    error, log = refusals["corrupted payload"]
    assert "0x:23" in error.replace(" ", ""), error
    assert "XnnpackAdapterBackend: invalid blob: checksum mismatch" in log, log


def test_a_blob_without_the_header_is_refused(refusals):
    error, log = refusals["no header"]
    assert "0x:23" in error.replace(" ", ""), error
    assert "XnnpackAdapterBackend: invalid blob: wrong magic" in log, log


def test_a_header_naming_another_backend_is_refused(refusals):
    error, log = refusals["other backend"]
    assert "0x:23" in error.replace(" ", ""), error
    assert "blob was written for backend 'XnnpackAdapterBackenX', not 'XnnpackAdapterBackend'" in log, log


@pytest.mark.full
def test_the_adapter_is_certified(adapter, tmp_path):
    reports = tmp_path / "reports"
    proc = subprocess.run(
        [
            str(BIN / "executorch-conformance"),
            "run",
            "--backend",
            "XnnpackAdapterBackend",
            "--certify",
            "--report-dir",
            str(reports),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=3600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    report = json.loads((reports / "report.json").read_text())
    assert report["verdict"] == "certified"
    outcomes = {r["id"]: r["outcome"] for r in report["results"]}
    assert all(outcomes[i] == "passed" for i in ("BLOB-1", "BLOB-2", "RT-5", "RT-6", "OPS-1", "OPS-2")), (
        outcomes
    )
    not_passed = {i: o for i, o in outcomes.items() if o != "passed"}
    # The checks of capabilities the adapter does not declare (acceptance rules among them: RT-7), and PKG.
    declared = set(report["backend"]["capabilities"])
    exempt = {r["id"] for r in report["results"] if r.get("applies_if") and r["applies_if"] not in declared}
    assert {i for i in not_passed if not i.startswith("PKG-")} <= exempt, not_passed
    assert set(not_passed.values()) == {"not_applicable"}
