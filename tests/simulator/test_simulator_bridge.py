"""The kit's simulator bridge (backend_kit.simulator) in this process's real ExecuTorch runtime: real
programs, lowered by SimGraphBackend's partitioner, whose delegates its Python simulator computes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from simulated_backends import graph_backend

from backend_kit import simulator

#: What the simulator was told at each init (method name, compile specs), for the tests to read.
SEEN: list[tuple[str, dict[str, bytes]]] = []


def _recording(payload: bytes, context: simulator.SimulatorContext):
    SEEN.append((context.method_name, context.compile_specs))
    return graph_backend.simulate(payload, context)


@pytest.fixture(scope="module")
def runtime():
    """The ExecuTorch runtime of this process with SimGraphBackend registered through the bridge (once per
    process: the runtime keeps one backend per id)."""
    from executorch.runtime import Runtime

    if graph_backend.BACKEND_ID not in simulator._registered:
        simulator.register(graph_backend.BACKEND_ID, _recording)
    return Runtime.get()


def _lowered(module: torch.nn.Module, inputs: tuple, partitioner=None) -> bytes:
    from executorch.exir import to_edge_transform_and_lower

    exported = torch.export.export(module, inputs)
    program = to_edge_transform_and_lower(
        exported, partitioner=[partitioner or graph_backend.SimGraphPartitioner()]
    )
    return program.to_executorch().buffer


class _Mixed(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(6, 3)

    def forward(self, x, y):
        return torch.relu(self.linear(x)) - torch.sigmoid(y), torch.tanh(y) * 3.0


def test_a_program_runs_with_its_delegates_simulated_and_matches_eager(runtime):
    module = _Mixed().eval()
    x, y = torch.randn(4, 6), torch.randn(4, 3)
    pte = _lowered(module, (x, y))
    method = runtime.load_program(pte).load_method("forward")
    for _ in range(2):  # the same delegates, executed again with new inputs
        x, y = torch.randn(4, 6), torch.randn(4, 3)
        got = method.execute([x, y])
        want = module(x, y)
        assert len(got) == 2
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w.detach(), rtol=1e-6, atol=1e-6)
    assert any(name == "forward" for name, _ in SEEN)


def test_channels_last_tensors_reach_the_simulator_in_their_layout(runtime):
    class Add(torch.nn.Module):
        def forward(self, a, b):
            return a + b

    a = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    b = torch.randn(2, 3, 4, 5)
    pte = _lowered(Add(), (a, b))
    got = runtime.load_program(pte).load_method("forward").execute([a, b])
    torch.testing.assert_close(got[0], a + b, rtol=0, atol=0)


def test_the_compile_specs_reach_the_simulator(runtime):
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    class WithSpecs(graph_backend.SimGraphPartitioner):
        def __init__(self) -> None:
            super().__init__()
            self.delegation_spec.compile_specs.append(CompileSpec("level", b"\x03"))

    class Neg(torch.nn.Module):
        def forward(self, x):
            return -x

    x = torch.randn(3)
    pte = _lowered(Neg(), (x,), WithSpecs())
    SEEN.clear()
    got = runtime.load_program(pte).load_method("forward").execute([x])
    torch.testing.assert_close(got[0], -x)
    assert SEEN == [("forward", {"level": b"\x03"})]


def test_registering_an_id_twice_is_refused_with_its_name(runtime):
    with pytest.raises(simulator.SimulatorError, match="'SimGraphBackend' is already registered"):
        simulator.register(graph_backend.BACKEND_ID, graph_backend.simulate)


def test_a_bridge_that_does_not_build_says_why_with_cmakes_words(tmp_path, monkeypatch):
    broken = tmp_path / "bridge"
    broken.mkdir()
    (broken / "CMakeLists.txt").write_text(
        'cmake_minimum_required(VERSION 3.24)\nproject(b LANGUAGES CXX)\nmessage(FATAL_ERROR "no such toolchain here")\n'
    )
    monkeypatch.setattr(simulator, "BRIDGE_DIR", broken)
    with pytest.raises(
        simulator.SimulatorError, match=r"building the simulator bridge failed(.|\n)*no such toolchain here"
    ):
        simulator.bridge_library(tmp_path / "cache")
    assert not list((tmp_path / "cache").glob("simulator-bridge/*/lib*.so"))  # nothing half-built is kept
