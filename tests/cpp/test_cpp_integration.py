"""A C++ application links ExecuTorch and the reference backend through their
CMake packages; each registration model is proven by running it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import torch

# The full tier (CI; bash scripts/test.sh --full): builds C++ programs against the executorch SDK
pytestmark = pytest.mark.full

ROOT = Path(__file__).resolve().parents[2]
RUNNER_SOURCE = ROOT / "reference_backend" / "examples" / "cpp_runner"
SITE = Path(sysconfig.get_paths()["purelib"])
LINK_MODES = ["shared", "static-explicit", "static-plain", "static-whole-archive"]


def _tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else name


def configure_and_build(
    source: Path, build: Path, prefix_path: str, *defines: str
) -> subprocess.CompletedProcess:
    configure = subprocess.run(
        [
            _tool("cmake"),
            "-S",
            str(source),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}",
            f"-DCMAKE_PREFIX_PATH={prefix_path}",
            *defines,
        ],
        capture_output=True,
        text=True,
    )
    if configure.returncode != 0:
        return configure
    return subprocess.run([_tool("cmake"), "--build", str(build)], capture_output=True, text=True)


@pytest.fixture(scope="session")
def runners(tmp_path_factory) -> dict[str, Path]:
    """The cpp_runner example built once per link mode."""
    built = {}
    prefix = f"{SITE / 'executorch'};{SITE / 'reference_backend'}"
    for mode in LINK_MODES:
        build = tmp_path_factory.mktemp(f"runner-{mode}")
        proc = configure_and_build(RUNNER_SOURCE, build, prefix, f"-DREFERENCE_BACKEND_LINK={mode}")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        built[mode] = build / "cpp_runner"
    return built


class Model(torch.nn.Module):
    """Delegated linear/relu/add around a log_softmax that runs on ExecuTorch's CPU kernels."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(6, 5)

    def forward(self, x, y):
        return torch.log_softmax(torch.relu(self.fc(x)) + y, dim=-1), x * 2.0


@pytest.fixture(scope="session")
def program(tmp_path_factory):
    from executorch.exir import to_edge_transform_and_lower

    import reference_backend

    torch.manual_seed(0)
    model = Model().eval()
    inputs = (torch.randn(3, 6), torch.randn(3, 5))
    edge = to_edge_transform_and_lower(
        torch.export.export(model, inputs), partitioner=[reference_backend.ReferencePartitioner()]
    )
    path = tmp_path_factory.mktemp("pte") / "model.pte"
    path.write_bytes(edge.to_executorch().buffer)
    values = tmp_path_factory.mktemp("inputs") / "inputs.txt"
    values.write_text(" ".join(f"{v:.9g}" for t in inputs for v in t.flatten().tolist()))
    with torch.no_grad():
        expected = model(*inputs)
    return path, values, expected


def run(runner: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(runner), *map(str, args)],
        capture_output=True,
        text=True,
        env=dict(os.environ, **(env or {})),
        timeout=120,
    )


def parse_outputs(stdout: str) -> list[torch.Tensor]:
    outputs = []
    for line in stdout.splitlines():
        if line.startswith("output "):
            head, values = line.split(":", 1)
            shape = [int(d) for d in head[head.index("[") + 1 : head.index("]")].split(",")]
            outputs.append(torch.tensor([float(v) for v in values.split()]).reshape(shape))
    return outputs


@pytest.mark.parametrize("mode", ["shared", "static-explicit", "static-whole-archive"])
def test_application_registers_the_backend_and_matches_eager(runners, program, mode):
    path, values, expected = program
    proc = run(runners[mode], path, "--inputs", values)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "registered backends: ReferenceBackend" in proc.stdout
    outputs = parse_outputs(proc.stdout)
    assert len(outputs) == 2
    for actual, wanted in zip(outputs, expected):
        torch.testing.assert_close(actual, wanted, rtol=1e-5, atol=1e-6)


def test_plain_static_link_drops_the_registration(runners, program):
    path, values, _ = program
    proc = run(runners["static-plain"], path, "--inputs", values)
    assert proc.returncode == 2
    assert "registered backends:\n" in proc.stdout  # none
    assert "Backend ReferenceBackend is not registered" in proc.stderr
    assert "failed with error 0x20" in proc.stderr


def test_runtime_of_another_minor_release_is_refused_at_registration(runners, program, tmp_path):
    """The same libexecutorch.so presented as 1.4.1: the backend refuses to register."""
    path, values, _ = program
    fake = tmp_path / "executorch"
    (fake / "lib").mkdir(parents=True)
    for lib in (SITE / "executorch" / "lib").glob("libexecutorch*.so"):
        shutil.copy(lib, fake / "lib")
    (fake / "version.py").write_text('__version__ = "1.4.1"\n')
    proc = run(runners["shared"], path, "--inputs", values, env={"LD_LIBRARY_PATH": str(fake / "lib")})
    assert proc.returncode == 2
    line = next(ln for ln in proc.stderr.splitlines() if "not registering" in ln)
    from executorch.version import __version__ as built

    assert f"built for executorch {built.split('+')[0]}, this process runs executorch 1.4.1" in line
    assert str(fake / "lib" / "libexecutorch.so") in line


def test_cmake_package_refuses_another_executorch_minor(tmp_path):
    """find_package(ReferenceBackend) against an executorch 1.4 package fails, naming both versions."""
    fake = tmp_path / "fake-executorch" / "lib" / "cmake" / "executorch"
    fake.mkdir(parents=True)
    (fake / "executorch-config.cmake").write_text(
        'set(EXECUTORCH_BUILD_VERSION "1.4.1")\nset(executorch_FOUND TRUE)\n'
        "add_library(executorch::runtime INTERFACE IMPORTED)\n"
    )
    proc = configure_and_build(
        RUNNER_SOURCE, tmp_path / "build", f"{fake.parents[2]};{SITE / 'reference_backend'}"
    )
    assert proc.returncode != 0
    text = " ".join((proc.stdout + proc.stderr).split())  # CMake wraps long messages
    assert "was built for executorch 1.5" in text and "this project uses executorch 1.4.1" in text


def test_runner_rejects_wrong_number_of_values(runners, program):
    path, _, _ = program
    proc = run(runners["shared"], path, "1", "2", "3")
    assert proc.returncode == 65
    assert "input 0 needs 18 values, 3 given in all" in proc.stderr
