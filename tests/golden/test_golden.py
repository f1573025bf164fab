"""Golden .pte files written by past ExecuTorch releases (see README.md here).

For every ``tests/golden/<release>/`` present:

* the executorch-free reader finds exactly the plans, backend ids, compile
  specs and blobs that ExecuTorch's emitter recorded in ``manifest.json``
  (an independent record: taken from the emitter's in-memory program);
* each reference blob's contract header decodes and names that release's
  executorch version;
* today's export of the same model with the installed reference backend still
  stores the same backend id as every golden ``reference.pte``;
* the golden of the installed executorch release runs in this runtime and
  gives the recorded output; older goldens are tried in this runtime too
  (ExecuTorch promises that a .pte runs on at least the next minor runtime).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from conformance.inspection.blob_header import read_header  # noqa: E402
from conformance.pte import read_pte  # noqa: E402

BACKEND_ID = "ReferenceBackend"
RELEASES = sorted(p.name for p in HERE.iterdir() if (p / "manifest.json").is_file())
FILES = ("reference.pte", "xnnpack.pte")

#: Older goldens verified (2026-11, executorch 1.5.1 + reference runtime 0.1.0)
#: to load and give the recorded output in the current runtime. Goldens of
#: releases not listed here are tried, and the outcome is only reported.
VERIFIED_ON_CURRENT_RUNTIME = {
    "1.0.1": FILES,
    "1.1.0": FILES,
    "1.2.0": FILES,
    "1.3.1": FILES,
    "1.4.1": FILES,
    "1.5.0": FILES,
}


def _manifest(release: str) -> dict:
    return json.loads((HERE / release / "manifest.json").read_text())


def _triple(version: str) -> tuple[int, int, int]:
    parts = version.split("+", maxsplit=1)[0].split(".")
    return tuple(int(p) for p in parts[:3])  # type: ignore[return-value]


def _produced() -> list[tuple[str, str]]:
    return [(r, f) for r in RELEASES for f in FILES if "sha256" in _manifest(r)["files"].get(f, {})]


PRODUCED = _produced()
REFERENCE_GOLDENS = [r for r, f in PRODUCED if f == "reference.pte"]


def _installed_executorch() -> str | None:
    try:
        from executorch.version import __version__
    except ImportError:
        return None
    return __version__.split("+")[0]


def test_goldens_exist():
    assert RELEASES, "no tests/golden/<release>/manifest.json; run tests/golden/make_all.sh"
    for release in RELEASES:
        assert release.split(".")[0].isdigit(), release
        m = _manifest(release)
        assert m["executorch_version"].split("+")[0] == release
        for name, entry in m["files"].items():
            if "sha256" in entry:
                assert (HERE / release / name).stat().st_size < 100 * 1024
            else:  # a failed export is recorded with its error, and no file is left behind
                assert entry["error"] and not (HERE / release / name).exists()


@pytest.mark.parametrize(("release", "name"), PRODUCED)
def test_file_is_the_recorded_one(release, name):
    data = (HERE / release / name).read_bytes()
    entry = _manifest(release)["files"][name]
    assert len(data) == entry["size"]
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]


@pytest.mark.parametrize(("release", "name"), PRODUCED)
def test_reader_finds_what_the_emitter_wrote(release, name):
    """Plans, backend ids, compile specs and blobs, as ExecuTorch X emitted them."""
    entry = _manifest(release)["files"][name]
    emitted = entry["emitted"]
    program = read_pte(HERE / release / name)

    assert program.file_identifier == entry["file_identifier"]
    assert program.schema_version == emitted["schema_version"]
    eh = entry["extended_header"]
    assert (program.extended_header is None) == (eh is None)
    if eh is not None:
        assert program.extended_header.length == eh["length"]

    assert [p.name for p in program.execution_plans] == [p["name"] for p in emitted["plans"]]
    for plan, recorded in zip(program.execution_plans, emitted["plans"]):
        got = [(d.backend_id, [[k, v.hex()] for k, v in d.compile_specs]) for d in plan.delegates]
        want = [(d["backend_id"], d["compile_specs"]) for d in recorded["delegates"]]
        assert got == want
        for d, rec in zip(plan.delegates, recorded["delegates"]):
            if "blob_size" in rec:  # the emitter held the blob inline (it may move to a segment)
                assert len(d.data) == rec["blob_size"]
                assert hashlib.sha256(d.data).hexdigest() == rec["blob_sha256"]


def _make_golden_module():
    spec = importlib.util.spec_from_file_location("make_golden", HERE / "make_golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("release", "name"), PRODUCED)
def test_reader_output_is_unchanged(release, name):
    """Everything the reader reported when the golden was made, it reports today."""
    entry = _manifest(release)["files"][name]
    if entry.get("read_back") is None:
        pytest.fail(
            f"no read_back in the manifest ({entry.get('read_back_error')}); rerun make_golden.py --read-back"
        )
    assert _make_golden_module().read_back((HERE / release / name).read_bytes()) == entry["read_back"]


@pytest.mark.parametrize("release", REFERENCE_GOLDENS)
def test_reference_blob_headers_name_the_release(release):
    m = _manifest(release)
    delegates = read_pte(HERE / release / "reference.pte").delegates()
    assert delegates
    for d in delegates:
        assert d.backend_id == BACKEND_ID
        header = read_header(d.data)
        assert header.backend_id == BACKEND_ID
        assert header.executorch_version == _triple(m["executorch_version"])
        assert header.backend_version == _triple(m["reference_backend_version"])
        assert dict(d.compile_specs)["blob_format"] == ".".join(map(str, header.blob_format)).encode()


@pytest.mark.parametrize(("release", "name"), [(r, f) for r, f in PRODUCED if f == "xnnpack.pte"])
def test_xnnpack_blobs_keep_their_own_header(release, name):
    """XNNPACK blobs: 4 zero bytes then the magic "XH00", in every release."""
    for d in read_pte(HERE / release / name).delegates():
        assert d.backend_id == "XnnpackBackend"
        assert d.data[:8] == b"\0\0\0\0XH00"


def test_reader_does_not_import_executorch():
    paths = [str(HERE / r / f) for r, f in PRODUCED]
    code = textwrap.dedent(
        """
        import sys
        from conformance.pte import read_pte
        for path in sys.argv[1:]:
            read_pte(path)
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("executorch", "torch"))
        assert not loaded, loaded
        """
    )
    subprocess.run([sys.executable, "-c", code, *paths], check=True, cwd=REPO)


# -- today's export, today's runtime ------------------------------------------


@pytest.fixture(scope="module")
def todays_reference_pte(tmp_path_factory) -> Path:
    """The golden model exported now with the installed reference backend."""
    pytest.importorskip("executorch")
    reference_backend = pytest.importorskip("reference_backend")
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    make_golden = _make_golden_module()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, example, _ = make_golden._model_and_input()
        spec = CompileSpec(*make_golden.REFERENCE_COMPILE_SPEC)
        partitioner = reference_backend.ReferencePartitioner([spec])
        exported = torch.export.export(model, (example,))
        program = to_edge_transform_and_lower(exported, partitioner=[partitioner])
        path = tmp_path_factory.mktemp("today") / "reference.pte"
        path.write_bytes(program.to_executorch().buffer)
    return path


def test_todays_export_keeps_the_backend_id(todays_reference_pte):
    today = read_pte(todays_reference_pte).delegates()
    assert [d.backend_id for d in today] == [BACKEND_ID]
    assert REFERENCE_GOLDENS
    for release in REFERENCE_GOLDENS:
        golden = read_pte(HERE / release / "reference.pte").delegates()
        assert [d.backend_id for d in golden] == [d.backend_id for d in today], release
        assert [d.compile_specs for d in golden] == [d.compile_specs for d in today], release
        assert read_header(golden[0].data).backend_id == read_header(today[0].data).backend_id


@pytest.fixture(scope="module")
def runtime():
    pytest.importorskip("executorch.runtime")
    reference_backend = pytest.importorskip("reference_backend")
    reference_backend.load_runtime()
    from executorch.runtime import Runtime

    return Runtime.get()


def _run(runtime, release: str, name: str) -> float:
    """Loads and runs a golden; returns the largest deviation from the recorded output."""
    import torch

    m = _manifest(release)["model"]
    method = runtime.load_program(HERE / release / name).load_method("forward")
    (out,) = method.execute([torch.tensor(m["input"], dtype=torch.float32)])
    return float((out - torch.tensor(m["expected_output"])).abs().max())


def _try(runtime, release: str, name: str) -> tuple[bool, str]:
    """(ran and matched, what happened, with the backend's log line if any)."""
    from conformance.fdcapture import capture_stderr

    with capture_stderr() as log:
        try:
            error = _run(runtime, release, name)
            outcome, ok = f"loads and runs, max deviation {error:.3g}", error <= 1e-5
        except Exception as exc:  # noqa: BLE001  the runtime's refusal is the result being recorded
            outcome, ok = f"does NOT load/run: {type(exc).__name__}: {exc}", False
    said = [line.strip() for line in log[0].splitlines() if "Backend" in line]
    if said:
        outcome += f"; runtime log: {said[0]}"
    return ok, outcome


def test_current_release_golden_runs(runtime, runtime_results):
    current = _installed_executorch()
    if current not in REFERENCE_GOLDENS:
        pytest.skip(f"no golden reference.pte for the installed executorch {current}")
    for name in FILES:
        if (current, name) in PRODUCED:
            ok, outcome = _try(runtime, current, name)
            runtime_results.append(f"{current}/{name} in executorch {current}: {outcome}")
            assert ok, outcome


OLDER = [(r, f) for r, f in PRODUCED if r != _installed_executorch()]


@pytest.mark.parametrize(("release", "name"), OLDER)
def test_older_golden_in_current_runtime(runtime, runtime_results, release, name, record_property):
    """Informative for unverified releases (reported as a skip); asserted for verified ones."""
    current = _installed_executorch()
    ok, outcome = _try(runtime, release, name)
    line = f"{release}/{name} in executorch {current}: {outcome}"
    runtime_results.append(line)
    record_property("current_runtime", line)
    if name in VERIFIED_ON_CURRENT_RUNTIME.get(release, ()):
        assert ok, line
    else:
        pytest.skip(f"informative: {line}")
