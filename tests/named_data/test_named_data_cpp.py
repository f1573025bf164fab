"""Named data from C++: the cpp_runner example loads a program with
``Module(pte, {ptd files}, load mode)``; the weights come from the .ptd (read
or mmap'd), and a missing file or key is one log line naming them."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import torch

# The full tier (CI; bash scripts/test.sh --full): builds the C++ runner
pytestmark = pytest.mark.full

ROOT = Path(__file__).resolve().parents[2]
RUNNER_SOURCE = ROOT / "reference_backend" / "examples" / "cpp_runner"
SITE = Path(sysconfig.get_paths()["purelib"])
THRESHOLD = 1024


def _tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else name


class Model(torch.nn.Module):
    """A delegated MLP (weights 4 KiB and 1 KiB) before a log_softmax on ExecuTorch's CPU kernels."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return torch.log_softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> Path:
    build = tmp_path_factory.mktemp("runner")
    prefix = f"{SITE / 'executorch'};{SITE / 'reference_backend'}"
    configure = subprocess.run(
        [
            _tool("cmake"),
            "-S",
            str(RUNNER_SOURCE),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}",
            f"-DCMAKE_PREFIX_PATH={prefix}",
        ],
        capture_output=True,
        text=True,
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    built = subprocess.run([_tool("cmake"), "--build", str(build)], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    return build / "cpp_runner"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Directory with inside.pte (named data in the .pte), external.pte and weights.ptd,
    the inputs file, the eager output and the keys of the blob."""
    from executorch.exir import to_edge_transform_and_lower

    import reference_backend
    from backend_kit.header import decode, payload_of
    from reference_backend.pte_blobs import delegate_blobs
    from reference_backend.serialize import named_entries

    torch.manual_seed(0)
    model = Model().eval()
    x = torch.randn(3, 32)
    out = tmp_path_factory.mktemp("named")
    for name, specs in (
        ("inside", reference_backend.named_data_specs(THRESHOLD)),
        ("external", reference_backend.named_data_specs(THRESHOLD, "weights")),
    ):
        edge = to_edge_transform_and_lower(
            torch.export.export(model, (x,)), partitioner=[reference_backend.ReferencePartitioner(specs)]
        )
        program = edge.to_executorch()
        (out / f"{name}.pte").write_bytes(program.buffer)
        program.write_tensor_data_to_file(str(out))
    (out / "inputs.txt").write_text(" ".join(f"{v:.9g}" for v in x.flatten().tolist()))
    (blob,) = delegate_blobs((out / "external.pte").read_bytes())
    keys = [e.key for e in named_entries(payload_of(blob.data), decode(blob.data).blob_format[1])]
    with torch.no_grad():
        expected = model(x)
    return out, expected, keys


def run(runner: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(runner), *map(str, args)], capture_output=True, text=True, timeout=120)


def output(stdout: str) -> torch.Tensor:
    line = next(ln for ln in stdout.splitlines() if ln.startswith("output 0 "))
    head, values = line.split(":", 1)
    shape = [int(d) for d in head[head.index("[") + 1 : head.index("]")].split(",")]
    return torch.tensor([float(v) for v in values.split()]).reshape(shape)


@pytest.mark.parametrize(
    "args",
    [
        ("inside.pte",),
        ("external.pte", "--data", "weights.ptd"),
        ("external.pte", "--data", "weights.ptd", "--mmap"),
    ],
    ids=["inside-pte", "ptd-read", "ptd-mmap"],
)
def test_runner_matches_eager(runner, exported, args):
    out, expected, _ = exported
    proc = run(
        runner,
        *[out / a if a.endswith((".pte", ".ptd")) else a for a in args],
        "--inputs",
        out / "inputs.txt",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    torch.testing.assert_close(output(proc.stdout), expected, rtol=1e-5, atol=1e-6)


def test_runner_without_the_ptd_names_key_and_file(runner, exported):
    out, _, keys = exported
    proc = run(runner, out / "external.pte", "--inputs", out / "inputs.txt")
    assert proc.returncode == 2
    (line,) = [ln for ln in proc.stderr.splitlines() if "] ReferenceBackend:" in ln]
    assert f"named data '{keys[0]}'" in line and "external file 'weights.ptd' was not loaded" in line
    assert "failed with error 0x24" in proc.stderr  # InvalidExternalData
    assert "output 0" not in proc.stdout


def test_runner_with_a_ptd_missing_a_key(runner, exported, tmp_path):
    out, _, keys = exported
    forged = tmp_path / "weights.ptd"
    forged.write_bytes(
        (out / "weights.ptd").read_bytes().replace(keys[1].encode(), keys[1][:-1].encode() + b"x", 1)
    )
    proc = run(runner, out / "external.pte", "--data", forged, "--mmap", "--inputs", out / "inputs.txt")
    assert proc.returncode == 2
    (line,) = [ln for ln in proc.stderr.splitlines() if "] ReferenceBackend:" in ln]
    assert f"named data '{keys[1]}'" in line
    assert "is missing from the data loaded for 'weights.ptd'" in line
