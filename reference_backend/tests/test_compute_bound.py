"""The compute bound (issue 31; include/reference_backend/compute.h): init estimates
the steps of one execute from the blob's shapes and refuses a blob over the
application's maximum (default 10^10, REFERENCE_BACKEND_MAX_COMPUTE_STEPS or
reference_backend_set_max_compute_steps) with one line, before anything runs."""

from __future__ import annotations

import pytest
from forged_programs import conv_relu_pte, fields_of, forge, op_named, set_dims, set_operands, set_param
from hostile_child import run_in_child
from payload_fields import CONV_GEOMETRY

#: ConvRelu at [1, 3, 8, 8]: conv2d 192 outputs x (3 x (3 x 4 + 1) + 1) + 1, relu 2 x 192 + 1,
#: the output copy 192 (compute.cpp's estimate).
GENUINE_STEPS = 192 * 40 + 1 + 2 * 192 + 1 + 192


def _refusal(result) -> str:
    assert result.stage == "load" and result.error is not None, f"accepted (got to {result.stage})"
    assert "0x:25" in result.error, result.error  # OutOfResources
    (line,) = result.backend_lines()
    return line


@pytest.fixture(scope="module")
def genuine(tmp_path_factory):
    path = tmp_path_factory.mktemp("genuine") / "conv_relu.pte"
    path.write_bytes(conv_relu_pte())
    return path


@pytest.fixture(scope="module")
def heavy(tmp_path_factory):
    """A forged conv2d that touches little memory (a 420 MB result) but would
    take about 2.7e10 steps: a dead conv2d over a zero-height constant of 84
    channels with padding 65535 x 400, weight [1, 84, 1, 1]."""
    pte = conv_relu_pte()
    f = fields_of(pte)
    conv, relu = op_named(f, "conv2d"), op_named(f, "relu")
    x, w, b = conv.inputs

    def edit(p, f):
        set_operands(p, relu, [x])
        set_operands(p, conv, [b, w])
        set_dims(p, f.values[b], [1, 84, 0, 1])
        set_dims(p, f.values[w], [1, 84, 1, 1])  # the 81 weights and 3 biases, read as one tensor
        set_param(p, f, conv, CONV_GEOMETRY.index("pad_h"), 65535)
        set_param(p, f, conv, CONV_GEOMETRY.index("pad_w"), 400)
        set_dims(p, f.values[conv.output], [1, 1, 131070, 801])

    path = tmp_path_factory.mktemp("heavy") / "heavy.pte"
    path.write_bytes(forge(pte, edit))
    return path


@pytest.mark.full  # each starts processes that export and run: the full tier (CI) runs it
def test_a_genuine_program_over_the_maximum_is_refused_at_init_and_runs_under_it(genuine):
    limit = GENUINE_STEPS - 1
    line = _refusal(run_in_child(genuine, env={"REFERENCE_BACKEND_MAX_COMPUTE_STEPS": str(limit)}))
    assert line == (
        f"ReferenceBackend: refusing a blob needing ~{GENUINE_STEPS} compute steps per execute "
        f"(op 0, conv2d: {192 * 40 + 1}), more than the {limit} allowed "
        "(raise it with REFERENCE_BACKEND_MAX_COMPUTE_STEPS)"
    )
    result = run_in_child(genuine, env={"REFERENCE_BACKEND_MAX_COMPUTE_STEPS": str(GENUINE_STEPS)})
    assert (result.stage, result.error, result.max_compute) == ("done", None, GENUINE_STEPS)
    result = run_in_child(genuine)
    assert (result.stage, result.error, result.max_compute) == ("done", None, 10**10)


def test_the_default_maximum_refuses_a_forged_program_that_would_run_for_minutes(heavy):
    line = _refusal(run_in_child(heavy))
    assert "more than the 10000000000 allowed" in line and "(op 0, conv2d: " in line, line


@pytest.mark.full  # each starts processes that export and run: the full tier (CI) runs it
def test_the_c_api_raises_the_maximum_over_the_environment(heavy, genuine):
    result = run_in_child(heavy, run=False, max_compute=10**11)
    assert (result.stage, result.error, result.max_compute) == ("load", None, 10**11), result.backend_lines()
    env = {"REFERENCE_BACKEND_MAX_COMPUTE_STEPS": "1000"}
    result = run_in_child(genuine, env=env, max_compute=GENUINE_STEPS)
    assert (result.stage, result.error) == ("done", None), result.backend_lines()


def test_an_unreadable_maximum_in_the_environment_is_logged_and_the_default_used(genuine):
    result = run_in_child(genuine, env={"REFERENCE_BACKEND_MAX_COMPUTE_STEPS": "1e10"})
    assert (result.stage, result.error, result.max_compute) == ("done", None, 10**10)
    assert (
        "ReferenceBackend: REFERENCE_BACKEND_MAX_COMPUTE_STEPS='1e10' is not a step count; using the default "
        "maximum of 10000000000 steps" in result.backend_lines()
    )
