"""Programs of several methods on a target (``run --target``): the runner's ``methods`` entry runs MTH-1 and
MTH-2 and the LLM tier's decoding (teacher-forced) as the vendor process does, a runtime wrong only with
two methods loaded together fails MTH-1 there too, and a runner built before the entry kind existed is
told to be rebuilt, never taken for the backend's defect."""

from __future__ import annotations

import pytest
from suite_runner import results_by_id, run_suite

from conformance.outcomes import SuiteCannotRun
from conformance.targets.bundle import Bundle, BundleError, read_result
from conformance.targets.runtime import TargetRuntime, _call_outputs, _methods_result


def test_a_methods_entry_is_written_with_its_calls_and_shared_arenas(tmp_path):
    bundle = Bundle(tmp_path / "b")
    bundle.entry(
        "t",
        "methods",
        "the program",
        program=[("p", "f1.pte")],
        rounds=[(0, "prefill", "f2.bin"), (1, "decode", "f3.bin")],
        share_arenas=True,
    )
    bundle.close()
    lines = (tmp_path / "b" / "manifest.txt").read_text().splitlines()
    assert lines[1:] == [
        "entry t methods",
        "what the program",
        "program p f1.pte",
        "round 0 prefill f2.bin",
        "round 1 decode f3.bin",
        "share_arenas",
        "end",
    ]


def test_a_result_of_calls_is_read_with_their_seconds_and_a_malformed_line_is_one_error(tmp_path):
    good = tmp_path / "t.txt"
    good.write_text(
        "output decode 0 1 t-call-1.bin\nseconds 1 0.0025\noutput prefill 0 0 t-call-0.bin\n"
        "seconds 0 0.5\nstatus ok\n"
    )
    r = read_result(good)
    assert r.ok and r.seconds == {0: 0.5, 1: 0.0025}
    assert sorted(r.output_files) == [("decode", 0, 1, "t-call-1.bin"), ("prefill", 0, 0, "t-call-0.bin")]
    bad = tmp_path / "bad.txt"
    bad.write_text("output decode one t.bin\nstatus ok\n")
    with pytest.raises(BundleError, match=r"bad.txt has a malformed line: 'output decode one t.bin'"):
        read_result(bad)


def test_a_runner_that_predates_the_methods_entry_is_told_to_be_rebuilt(tmp_path):
    old = tmp_path / "t.txt"
    old.write_text("status error\nstep bundle\nerror unknown entry kind 'methods'\n")
    with pytest.raises(SuiteCannotRun, match=r"does not know the entry kind 'methods'.*rebuild it from"):
        _methods_result(old)


def test_results_missing_a_call_and_an_llm_run_without_eager_tokens_are_one_bundle_error(tmp_path):
    r = read_result(_written(tmp_path / "t.txt", "output decode 0 1 t-call-1.bin\nstatus ok\n"))
    with pytest.raises(BundleError, match=r"the runner wrote the outputs of calls \[1\]"):
        _call_outputs(tmp_path, r)
    with pytest.raises(
        BundleError, match="runs on a target only teacher-forced, with eager PyTorch's tokens"
    ):
        TargetRuntime._bundle_run_llm(None, Bundle(tmp_path / "b"), b"", b"", "the LLM decoder", None)  # type: ignore[arg-type]


def _written(path, text: str):
    path.write_text(text)
    return path


@pytest.mark.full  # builds the runner; lowers the two-method samples and both decoders (60 s)
def test_the_methods_and_the_llm_tier_run_on_the_runner(tmp_path, reference_runner):
    code, report, output = run_suite(
        tmp_path,
        "ReferenceBackend",
        "--checks",
        "MTH",
        "--models",
        "llm,llm_quantized",
        "--target",
        "local",
        "--runner",
        str(reference_runner),
    )
    assert report is not None, output
    results = results_by_id(report)
    assert {i: r["outcome"] for i, r in results.items()} == {"MTH-1": "passed", "MTH-2": "passed"}, output
    assert "each loaded alone and then both from one program" in results["MTH-1"]["reason"]
    rows = {m["model"]: m for m in report["models"]}
    for name in ("llm", "llm_quantized"):
        row = rows[name]
        assert row["result"] == "matched" and row["decoding"] == "teacher-forced", row
        assert row["tokens"] == row["expected_tokens"] and row["tokens_per_s"] > 0, row
    assert code == 0, output


@pytest.mark.full  # builds the runner with the broken library (30 s)
def test_a_runtime_wrong_with_two_methods_loaded_fails_mth1_on_the_runner(tmp_path, broken_runtime_dir):
    from runner_build import build_runner

    library = broken_runtime_dir / "liblast_init_wins_backend.so"
    runner = build_runner("last-init-wins", f"-DRUNNER_BACKEND_LIBRARIES={library}")
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:LAST_INIT_WINS",
        "--checks",
        "RT-1,MTH-1",
        "--target",
        "local",
        "--runner",
        str(runner),
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir)},
    )
    assert report is not None, output
    mth1 = results_by_id(report)["MTH-1"]
    assert mth1["outcome"] == "failed", mth1
    assert "method 'prefill'" in mth1["reason"] and "loaded from one program" in mth1["reason"], mth1
    assert results_by_id(report)["RT-1"]["outcome"] == "passed"
    assert code == 1
