"""Where a vendor task's time went (``conformance.vendor.step_times``): each step lasts until the next one or
the task's end, and counts as init, execute or lowering by its text; a damaged times file counts what it can.
The envelope writes the file the parent reads, and a check records its vendor process's seconds."""

from __future__ import annotations

import time

import pytest

from conformance.context import Context
from conformance.descriptor import load_descriptor
from conformance.vendor import envelope, step_times
from conformance.vendor.step_times import add, kind, line, read, since


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ("load of sample 'mlp' (copy 1 of 2)", "init"),
        ("execute of sample 'mlp'", "execute"),
        ("200 executes of sample 'mlp', counted", "execute"),
        ("lowering sample model 'mlp' with the backend's partitioners", "lowering"),
        ("torch.export.export of sample model 'mlp'", "lowering"),
        ("to_executorch() of sample model 'mlp'", "lowering"),
        ("destroy of sample 'mlp' (the loaded methods freed)", None),
        ("make_inputs() of sample model 'mlp'", None),
        ("is_available() of ReferenceBackend", None),
    ],
)
def test_each_step_has_its_kind(step, expected):
    assert kind(step) == expected


def test_a_step_lasts_until_the_next_one_or_the_end(tmp_path):
    path = tmp_path / "task.log.times"
    path.write_text(
        line(100.0, "torch.export.export of sample model 'mlp'")
        + line(100.5, "lowering sample model 'mlp' with the backend's partitioners")
        + line(102.0, "load of sample 'mlp'")
        + line(112.0, "execute of sample 'mlp'")
        + line(112.25, "destroy of sample 'mlp' (the loaded methods freed)")
        + line(113.0, "execute of sample 'mlp'")
    )
    assert read(path, ended=113.5) == {"lowering": 2.0, "init": 10.0, "execute": 0.75}


def test_a_damaged_or_missing_file_counts_what_it_can(tmp_path):
    path = tmp_path / "task.log.times"
    path.write_bytes(
        line(10.0, "load of sample 'mlp'").encode()
        + b"not a time\tload of x\n\xff\xfe garbage without a tab\n"
        + line(13.0, "execute of sample 'mlp'").encode()
        + b"14.0"  # cut short while it was written
    )
    assert read(path, ended=15.0) == {"init": 3.0, "execute": 2.0}
    assert read(tmp_path / "absent.times", ended=1.0) == {}
    # a clock that went backwards (a foreign file) counts nothing for that step
    path.write_text(line(20.0, "load of sample 'mlp'"))
    assert read(path, ended=19.0) == {}


def test_seconds_add_up_and_a_check_takes_what_grew():
    total: dict[str, float] = {}
    add(total, {"init": 2.0})
    before = dict(total)
    add(total, {"init": 1.5, "execute": 0.5})
    assert total == {"init": 3.5, "execute": 0.5}
    assert since(total, before) == {"init": 1.5, "execute": 0.5}
    assert since(total, total) == {}


def test_the_envelope_writes_each_step_with_its_start(tmp_path):
    log = tmp_path / "task.log"

    def task():
        envelope.step("load of sample 'mlp'")
        time.sleep(0.2)
        envelope.step("execute of sample 'mlp'")
        return "done"

    before = time.monotonic()
    envelope.run(str(log), task)
    after = time.monotonic()
    rows = [r.split("\t") for r in (tmp_path / f"task.log{step_times.TIMES_SUFFIX}").read_text().splitlines()]
    assert [step for _, step in rows] == ["load of sample 'mlp'", "execute of sample 'mlp'"]
    starts = [float(t) for t, _ in rows]
    assert before <= starts[0] and starts[0] + 0.2 <= starts[1] <= after
    # outside a task, steps are written nowhere
    envelope.step("load of nothing")
    assert len((tmp_path / f"task.log{step_times.TIMES_SUFFIX}").read_text().splitlines()) == 2


def test_a_call_inside_another_gives_the_step_back_when_it_ends(tmp_path):
    """A partitioner's partition() runs inside the lowering (vendor_call in vendor_call): once it returned, a
    crash (Vela's, in the backend's preprocess) is in the lowering, not in partition(), and counts as lowering."""
    from conformance.vendor.process import read_log

    log = tmp_path / "task.log"
    lowering = "lowering 2 operator cases with the backend's partitioners"
    seen: list[str | None] = []

    def task():
        def lower():
            envelope.vendor_call("EthosUPartitioner.partition()", lambda: None)
            seen.append(read_log(log)[0])  # where a crash now would be said to be

        envelope.vendor_call(lowering, lower)

    envelope.run(str(log), task)
    assert seen == [f"{lowering} (after EthosUPartitioner.partition() ended)"]
    rows = (tmp_path / f"task.log{step_times.TIMES_SUFFIX}").read_text().splitlines()
    assert kind(rows[-1].split("\t", 1)[1]) == "lowering"


def test_a_check_records_its_vendor_processs_seconds(tmp_path):
    """A real vendor process of the reference backend lowers, loads and executes a sample for one check: the
    check records lowering, init and execute seconds, and the times files go with the task's other files."""
    ctx = Context(load_descriptor("ReferenceBackend"), "ReferenceBackend", lowering_cache=None)
    try:
        ctx.start_check("RT-3")
        sample = ctx.sample("mlp")
        outputs = ctx.execute(ctx.pte("mlp"), sample.inputs, "sample 'mlp'")
        assert len(outputs) == len(sample.expected)
        recorded = dict(ctx.properties["RT-3"])
        scratch = ctx.vendor.scratch
    finally:
        ctx.close()
    for key in ("lowering_s", "init_s", "execute_s"):
        assert float(recorded[key]) > 0, recorded
    assert ctx.vendor.step_seconds["lowering"] == pytest.approx(float(recorded["lowering_s"]), abs=1e-5)
    assert not list(scratch.glob(f"*{step_times.TIMES_SUFFIX}"))
