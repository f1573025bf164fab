"""Several threads loading and executing the same program at once give the
results each gets alone, with the runtime built under ASan + UBSan, and under
ThreadSanitizer, which reports no data race in the reference runtime."""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import torch

# The full tier (CI; bash scripts/test.sh --full): builds and runs a threaded C++ program
pytestmark = pytest.mark.full

HERE = Path(__file__).parent


def _tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else name


#: The -fsanitize= lists the program and the runtime are built with, and each one's options at run time.
SANITIZERS = {
    "address,undefined": {
        "ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1",
        "UBSAN_OPTIONS": "halt_on_error=1",
    },
    "thread": {"TSAN_OPTIONS": "halt_on_error=1:second_deadlock_stack=1"},
}


@pytest.fixture(scope="module", params=list(SANITIZERS))
def sanitized(request, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """(the concurrency program built with the sanitizers of this case, their run-time options)."""
    build = tmp_path_factory.mktemp("concurrency")
    site = Path(sysconfig.get_paths()["purelib"])
    for cmd in (
        [
            _tool("cmake"),
            "-S",
            str(HERE / "concurrency"),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}",
            f"-DCMAKE_PREFIX_PATH={site / 'executorch'}",
            "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
            f"-DCONCURRENCY_SANITIZERS={request.param}",
        ],
        [_tool("cmake"), "--build", str(build)],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return build / "concurrency", SANITIZERS[request.param]


def test_threads_share_a_program_and_get_correct_results(sanitized, tmp_path):
    concurrency_binary, options = sanitized
    from executorch.exir import to_edge_transform_and_lower

    import reference_backend

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(32, 16)

        def forward(self, x, y):
            return torch.log_softmax(torch.relu(self.fc(x)) * y, dim=-1), x + 1.0

    torch.manual_seed(0)
    inputs = (torch.randn(8, 32), torch.randn(8, 16))
    program = to_edge_transform_and_lower(
        torch.export.export(Model().eval(), inputs), partitioner=[reference_backend.ReferencePartitioner()]
    ).to_executorch()
    path = tmp_path / "model.pte"
    path.write_bytes(program.buffer)
    proc = subprocess.run(
        [str(concurrency_binary), str(path), "8", "200"],
        capture_output=True,
        text=True,
        timeout=300,
        env=options,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "8 threads x 200 runs: 1600 executions, 0 wrong or failed" in proc.stdout
    # The executions overlapped (all threads start after the last load): the test was not serial.
    most = int(re.search(r"at most (\d+) executing at once", proc.stdout)[1])
    assert most >= 2, proc.stdout
    assert "ERROR: AddressSanitizer" not in proc.stderr and "runtime error" not in proc.stderr
    assert "ThreadSanitizer" not in proc.stderr, proc.stderr[-3000:]
