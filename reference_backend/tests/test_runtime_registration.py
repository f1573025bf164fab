"""The runtime library joins the registry of the executorch in this process."""

from __future__ import annotations

import pytest
import torch
from executorch.runtime import Runtime

import reference_backend
from reference_backend.runtime import RuntimeLoadError, check_executorch_match


def test_registered_under_the_backend_id(runtime):
    names = Runtime.get().backend_registry.registered_backend_names
    assert "ReferenceBackend" in names
    assert Runtime.get().backend_registry.is_available("ReferenceBackend")


def test_loading_twice_is_harmless(runtime):
    before = Runtime.get().backend_registry.registered_backend_names
    assert reference_backend.load_runtime() is runtime
    assert runtime.reference_backend_register() == 0
    assert Runtime.get().backend_registry.registered_backend_names == before


@pytest.mark.parametrize(
    ("built", "running", "ok"),
    [
        ("1.5.1+cpu", "1.5.0", True),
        ("1.5.0", "1.5.1+cpu", True),
        ("1.5.1", "1.4.1", False),
        ("1.5.1", "2.0.0", False),
    ],
)
def test_library_for_another_executorch_minor_is_refused(built, running, ok):
    if ok:
        check_executorch_match(built, running)
        return
    with pytest.raises(RuntimeLoadError) as info:
        check_executorch_match(built, running)
    message = str(info.value)
    assert f"built against executorch {built}" in message and f"runs executorch {running}" in message
    assert "Fix: reinstall executorch-reference-backend" in message


def test_missing_library_is_named(tmp_path):
    with pytest.raises(RuntimeLoadError, match="does not exist"):
        reference_backend.load_runtime(tmp_path / "libnothing.so")


def test_wrong_input_shape_is_refused_with_reason(runtime, exported, capfd):
    method = Runtime.get().load_program(exported("mlp")).load_method("forward")
    capfd.readouterr()
    with pytest.raises(Exception):  # noqa: B017, PT011  the binding's error type is not part of the contract
        method.execute([torch.randn(4, 15)])
    err = capfd.readouterr().err
    assert "shape" in err or "size" in err, err


def test_load_method_keeps_a_temporary_buffer_alive(runtime, exported):
    import gc

    from models import cases

    model, example = cases()["mlp"]
    method = reference_backend.load_method(bytes(bytearray(exported("mlp"))))  # a temporary copy
    gc.collect()
    junk = [b"\xff" * len(exported("mlp")) for _ in range(200)]  # reuse freed memory if it was freed
    torch.testing.assert_close(
        method.execute(list(example))[0], model(*example).detach(), rtol=1e-5, atol=1e-5
    )
    assert len(junk) == 200
