"""Each deliberately broken backend is caught by the check that guards the
clause it breaks, with a message that names the defect."""

from __future__ import annotations

import re

import pytest
from suite_runner import results_by_id, run_suite

# descriptor, checks to run, the check that must fail, what its reason must say
CASES = {
    "WRONG_ID": ("AOT,SER", "AOT-2", r"'ReferenceBackendV2' names no BackendDetails subclass"),
    "NONDETERMINISTIC": ("AOT", "AOT-5", r"preprocess is not deterministic: blob 0 of 'mlp' differs"),
    "MISSING_HEADER": ("BLOB,SER", "BLOB-1", r"does not start with a valid contract header: wrong magic"),
    "PRIVATE_IMPORT": (
        "PKG",
        "PKG-2",
        r"private_import_vendor/__init__.py:3: executorch.exir._serialize._program",
    ),
    "CLAIMS_TOO_MUCH": ("AOT", "AOT-4", r"claimed aten::exp in sample model 'partially_delegated'"),
    "WRONG_NUMERICS": ("RT", "RT-3", r"sample 'mlp' output 0 differs from eager PyTorch: max abs difference"),
    "ACCEPTS_INCOMPATIBLE": (
        "RT",
        "RT-5",
        r"the runtime loaded a blob whose header claims blob format 2\.\d+",
    ),
    "FORGES_ACCEPTED": (
        "RT-1,RT-5",
        "RT-5",
        (
            r"the runtime loaded a blob that the descriptor's incompatible_blobs\(\) made to claim blob format "
            r"9\.0; it must refuse it with DelegateInvalidCompatibility \(0x30\)"
        ),
    ),
    "CLAIMS_NEWER_MINOR": (
        "RT-1,RT-7",
        "RT-7",
        r"header format 2, blob format 1\.\d+: declared accepted, but the runtime refused it with 0x30",
    ),
    "UNDERSTATES_OLD_FORMATS": (
        "RT-1,RT-7",
        "RT-7",
        r"header format 2, blob format 1\.1: declared refused, but the runtime did not refuse it with 0x30",
    ),
    "LEAVES_DEQUANTIZE": (
        "QNT",
        "QNT-2",
        (
            r"quantized sample 'quant_net': \d+ quantize/dequantize node\(s\) left on CPU "
            r"next to the ReferenceBackend delegate: \w+ \(quantized_decomposed::"
            r"dequantize_per_tensor\) feeds the delegate"
        ),
    ),
    "REQUANT_OFF_BY_ONE": (
        "QNT",
        "QNT-3",
        (
            r"quantized sample 'quant_net' output 0 differs from the converted model: "
            r".*that is [2-9]\.\d\d quantization steps of its scale [\d.]+, the backend "
            r"declares at most 1\.0"
        ),
    ),
    "WRITES_INPUTS": (
        "RT",
        "RT-8",
        (
            r"execute\(\) wrote into input 0 of sample 'mlp', which a ScratchesStateBackend delegate reads: "
            r"\d+ of \d+ elements changed, the first at flat index 0 \(.* became 0\.0\)"
        ),
    ),
    "SCRATCHES_STATE": (
        "RT-1,STATE",
        "STATE-1",
        (
            r"state did not carry: step 2 of 8 of the first loaded method .* differs: its output 0 differs from "
            r"eager PyTorch: .* \(the 1 step\(s\) before it matched"
        ),
    ),
    "BINDS_ONCE": (
        "RT,STATE",
        "STATE-1",
        (
            r"state is shared between two loaded methods: step 1 of 8 of the second loaded method .* differs: .*"
            r"\(the output equals the first loaded method's at step 1\)"
        ),
    ),
    "EXTRA_ID": (
        "RT",
        "RT-6",
        (
            r"the backend's code registered 'GenericNpuBackend' besides 'ExtraIdBackend' \(once "
            r"executorch\.runtime was imported\)"
        ),
    ),
    "LAST_INIT_WINS": (
        "RT-1,RT-3,MTH",
        "MTH-1",
        (
            r"execute of method 'prefill' of the two-method program \(prefill and decode\) of sample model 'mlp' "
            r".*\(round 1, both methods loaded from one program, executed in turn\) failed"
        ),
    ),
    "WEIGHTS_TWICE": (
        "MTH",
        "MTH-2",
        (
            r"the weights 'prefill' and 'decode' share are stored twice: the two-method program of sample model "
            r"'large_mlp' .* is \d+ bytes; the single-method program \('decode' alone\) is \d+ bytes"
        ),
    ),
    "CLAIMS_NO_STATE": (
        "STATE",
        "STATE-2",
        r"the descriptor declares mutable_state, but its partitioners left the buffer update .* on CPU \(aten::index_put",
    ),
}

#: Defects that only the named check sees, besides the listed others: every other check run passes or does not
#: apply. BINDS_ONCE binds every loaded method to one state, so RT-10's threads, each executing its own loaded
#: method, also get one another's results.
SEEN_BY_ONE_CHECK = {"SCRATCHES_STATE": (), "BINDS_ONCE": ("RT-10",), "EXTRA_ID": (), "WRITES_INPUTS": ()}


#: The verdicts of the default tier (registration, the blob header, numerics): the rest run in the full tier
#: (CI runs those tests/long_tier.py keeps; bash scripts/test.sh --full).
DEFAULT_TIER = {"WRONG_ID", "MISSING_HEADER", "WRONG_NUMERICS"}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=() if n in DEFAULT_TIER else pytest.mark.full) for n in CASES]
)
def test_defect_is_caught_by_the_right_check(tmp_path, broken_runtime_dir, name):
    checks, failing, pattern = CASES[name]
    code, report, output = run_suite(
        tmp_path,
        f"broken_backends.descriptors:{name}",
        "--checks",
        checks,
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir)},
    )
    assert report is not None, output
    results = results_by_id(report)
    assert results[failing]["outcome"] == "failed", results[failing]
    assert re.search(pattern, results[failing]["reason"]), results[failing]["reason"]
    assert code != 0
    assert report["verdict"] == "not conformant"
    # named alone, or among the checks one cause failed
    assert any(
        r.startswith(f"{failing} failed")
        or failing in r.partition(":")[0].split("(")[-1].rstrip(")").split(", ")
        for r in report["verdict_reasons"]
    ), report["verdict_reasons"]
    # The same backend passes the checks its defect does not touch.
    assert any(r["outcome"] == "passed" for r in results.values()), results
    if name in SEEN_BY_ONE_CHECK:  # no weaker check catches it
        also = SEEN_BY_ONE_CHECK[name]
        others = {i: r["outcome"] for i, r in results.items() if i != failing and i not in also}
        assert set(others.values()) <= {"passed", "not_applicable"}, others
        for check in also:
            assert results[check]["outcome"] == "failed", results[check]
            assert "Methods of different handles must not share mutable state" in results[check]["reason"]


@pytest.mark.full  # a quantized lowering (100 s): the long tier (tests/long_tier.py)
def test_a_backend_failing_a_profile_it_claims_gets_that_profile_not_conformant(tmp_path, broken_runtime_dir):
    """REQUANT_OFF_BY_ONE declares the quantized capability (it claims the Quantized profile) and fails
    QNT-3: that profile is not conformant (report, JUnit, badge, verify), while Core, which it passes, is
    conformant; the run as a whole is not conformant."""
    import json
    import subprocess
    import sys
    import xml.etree.ElementTree as ET

    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:REQUANT_OFF_BY_ONE",
        "--checks",
        "RT-1,RT-3,QNT",
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir)},
    )
    assert report is not None, output
    profiles = {p["id"]: p for p in report["profiles"]}
    assert profiles["core"]["verdict"] == "conformant", profiles["core"]
    quantized = profiles["quantized"]
    assert quantized["verdict"] == "not conformant" and any("QNT-3" in r for r in quantized["reasons"]), (
        quantized
    )
    assert report["verdict"] == "not conformant" and code == 1
    badge = json.loads((tmp_path / "badge.json").read_text())
    assert badge["message"].startswith("not conformant"), badge
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")  # noqa: S314  the suite's own output
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["profile:quantized"] == "not conformant" and properties["profile:core"] == "conformant"
    verified = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "verify", str(tmp_path / "report.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Core conformant" in verified.stdout and "Quantized not conformant" in verified.stdout, (
        verified.stdout
    )
