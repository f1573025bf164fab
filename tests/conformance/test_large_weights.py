"""NDATA-5 (C-NDATA-5): named data past a 32-bit offset boundary loads, runs and matches, and a runtime that
keeps its offsets in 32 bits is caught, naming where the wrong output's weight lies.

The quick tests cross 2^24 (EXECUTORCH_CONFORMANCE_LARGE_WEIGHTS=16MiB) against a runtime narrowed to 24-bit
offsets (NARROW_OFFSET_BITS=24): the same defect, scaled. The long tier crosses 2^32 for real (16 GiB of
memory, a 4.3 GiB .ptd)."""

from __future__ import annotations

import os
import re

import pytest
from suite_runner import results_by_id, run_suite

from conformance import large_weights
from conformance.checks.named_data import ptd_index, ptd_segments
from conformance.large_weights import ENV, FULL_BOUNDARY, SIGNED_BOUNDARY, Size, SizeError
from conformance.outcomes import CheckFailed

GIB = 1 << 30


# --------------------------------------------------------------------------- the size of the program


@pytest.mark.parametrize(
    ("text", "value"),
    [("16MiB", 1 << 24), ("4GiB", FULL_BOUNDARY), ("2 gib", SIGNED_BOUNDARY), ("1048576", 1 << 20)],
)
def test_the_variable_names_a_power_of_two(text, value):
    assert large_weights.parse(text) == value


@pytest.mark.parametrize("text", ["lots", "3MiB", "512KiB", "16GiB", "-4GiB", "4.5GiB"])
def test_a_wrong_variable_is_refused_saying_what_is_accepted(text):
    with pytest.raises(SizeError, match=rf"{ENV}=.*power of two from 1MiB to 8GiB"):
        large_weights.parse(text)


def test_every_size_fills_its_boundary_with_16_weights_and_puts_the_17th_past_it():
    for boundary in (1 << 20, 1 << 24, SIGNED_BOUNDARY, FULL_BOUNDARY):
        size = Size(boundary)
        assert 16 * size.weight_bytes == boundary
        assert size.total_bytes == boundary + size.weight_bytes
    assert Size(FULL_BOUNDARY).rows == 16384


def test_the_boundary_is_2_32_unless_the_machine_cannot_hold_it():
    assert large_weights.choose(64 * GIB, {}) == Size(FULL_BOUNDARY)
    assert large_weights.choose(None, {}) == Size(FULL_BOUNDARY)  # memory unknown: try the real one
    small = large_weights.choose(10 * GIB, {})
    assert small.boundary == SIGNED_BOUNDARY
    assert "leaves 10 GiB" in (small.scaled or "")
    assert "signed 32-bit" in small.proves() and "unsigned 32 bits unjudged" in small.proves()
    with pytest.raises(SizeError, match=r"needs .* of memory and this machine leaves 4 GiB.*2\^32"):
        large_weights.choose(4 * GIB, {})
    quick = large_weights.choose(4 * GIB, {ENV: "16MiB"})
    assert quick.boundary == 1 << 24 and quick.scaled == f"{ENV}=16MiB"
    assert quick.proves().startswith("nothing about 32-bit offsets")
    assert Size(FULL_BOUNDARY).proves() == "no offset or size of the named data is kept in 32 bits"


# --------------------------------------------------------------------------- reading a .ptd


def test_segments_are_offsets_in_the_file_and_a_cut_file_is_malformed(tmp_path):
    import torch
    from executorch.exir import to_edge_transform_and_lower

    from reference_backend.conformance import DESCRIPTOR

    model = DESCRIPTOR.sample("large_mlp")
    module, inputs = model.make()
    program = to_edge_transform_and_lower(
        torch.export.export(module, inputs), partitioner=DESCRIPTOR.named_data.make_partitioners()
    ).to_executorch()
    program.write_tensor_data_to_file(str(tmp_path))
    (ptd,) = tmp_path.glob("*.ptd")
    segments = ptd_segments(ptd)
    assert len(segments) == 2 and ptd_index(ptd) == {k: n for k, (_o, n) in segments.items()}
    data = ptd.read_bytes()
    for key, (offset, size) in segments.items():
        assert key.startswith(("fc1.weight@", "fc2.weight@"))
        assert offset + size <= len(data)
        weight = getattr(module, key.split(".")[0]).weight.detach().reshape(-1)[:4].numpy().tobytes()
        assert data[offset : offset + 16] == weight
    cut = tmp_path / "cut.ptd"
    cut.write_bytes(data[: max(o for o, _ in segments.values()) + 8])
    with pytest.raises(CheckFailed, match=r"cut.ptd: named data .* runs past the end"):
        ptd_segments(cut)
    (tmp_path / "not.ptd").write_bytes(b"\0" * 64)
    with pytest.raises(CheckFailed, match=r"not.ptd is not a .ptd file"):
        ptd_segments(tmp_path / "not.ptd")


# --------------------------------------------------------------------------- the check


def test_the_reference_backend_passes_and_the_result_says_what_it_crossed(tmp_path):
    code, report, output = run_suite(tmp_path, "ReferenceBackend", "--checks", "NDATA-5", env={ENV: "16MiB"})
    assert code == 0, output
    result = results_by_id(report)["NDATA-5"]
    assert result["outcome"] == "passed", result
    assert result["reason"] == (
        f"scaled down ({ENV}=16MiB): reference_weights.ptd of 17 MiB, 1 named blob(s) past 16 MiB; proves "
        "nothing about 32-bit offsets (the path of large named data only)"
    )


#: A vendor environment's start-up code giving executorch's Python runtime the load_program of releases
#: before 1.5.0, which takes no .ptd.
_OLD_LOAD_PROGRAM = """
from executorch.runtime import Runtime

_load_program = Runtime.load_program


def load_program(self, data, *, verification=None):
    return _load_program(self, data)


Runtime.load_program = load_program
"""


def test_ndata5_does_not_apply_where_the_vendors_runtime_loads_no_ptd(tmp_path):
    """Whether a .ptd can be given is asked of the vendor process's executorch (here one whose
    ``load_program`` takes no data_path, as before 1.5.0), not of the process that judges."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_OLD_LOAD_PROGRAM)
    code, report, output = run_suite(
        tmp_path / "report",
        "ReferenceBackend",
        "--checks",
        "NDATA-5",
        env={ENV: "16MiB", "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])},
    )
    assert code == 0, output
    result = results_by_id(report)["NDATA-5"]
    assert result["outcome"] == "not_applicable", result
    assert "Runtime.load_program takes no data_path (added in 1.5.0)" in result["reason"], result


def test_a_runtime_that_narrows_offsets_fails_ndata5_naming_where_the_weight_lies(
    tmp_path, broken_runtime_dir
):
    code, report, output = run_suite(
        tmp_path,
        "broken_backends.descriptors:NARROW_OFFSETS",
        "--checks",
        "NDATA",
        env={"BROKEN_RUNTIME_DIR": str(broken_runtime_dir), ENV: "16MiB", "NARROW_OFFSET_BITS": "24"},
    )
    assert report is not None, output
    results = results_by_id(report)
    # below the boundary the runtime is right
    assert {i: r["outcome"] for i, r in results.items() if i != "NDATA-5"} == dict.fromkeys(
        ("NDATA-1", "NDATA-2", "NDATA-3", "NDATA-4"), "passed"
    )
    reason = results["NDATA-5"]["reason"]
    assert results["NDATA-5"]["outcome"] == "failed", reason
    assert re.search(
        r"1 of 17 outputs of the large-weights program \(17 linears, 17 MiB\) are wrong, read from "
        r"reference_weights.ptd of [\d,]+ bytes with 1 named blob\(s\) starting past byte 16,777,216 \(16 MiB\): "
        r"the weight of output 16 starts at byte 16,7\d\d,\d\d\d\. .*output 16 differs from eager PyTorch.*"
        r"keeps an offset or a size of the named data in 32 bits",
        reason,
    ), reason
    assert code != 0


@pytest.mark.full  # 2^32 for real: 16 GiB of memory, a 4.3 GiB .ptd, two runs of about a minute (long tier)
def test_past_2_32_the_reference_passes_and_a_32_bit_offset_runtime_fails(tmp_path, broken_runtime_dir):
    env = {ENV: "", "BROKEN_RUNTIME_DIR": str(broken_runtime_dir)}
    code, report, output = run_suite(
        tmp_path / "reference", "ReferenceBackend", "--checks", "NDATA-5", env=env
    )
    result = results_by_id(report)["NDATA-5"] if report else output
    assert code == 0 and result["outcome"] == "passed", result
    assert result["reason"].startswith("reference_weights.ptd of 4.25 GiB, 1 named blob(s) past 2^32"), result
    code, report, output = run_suite(
        tmp_path / "narrow", "broken_backends.descriptors:NARROW_OFFSETS", "--checks", "NDATA-5", env=env
    )
    result = results_by_id(report)["NDATA-5"] if report else output
    assert result["outcome"] == "failed", result
    assert (
        "starting past byte 4,294,967,296 (2^32): the weight of output 16 starts at byte 4,29"
        in result["reason"]
    )
