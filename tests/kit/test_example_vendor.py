"""A minimal vendor backend (tests/kit/example_vendor/) that depends only on
the contract kit: its runtime builds with backend_kit_add_backend() against
the executorch wheel, loads through backend_kit.runtime, and runs a lowered
program through executorch.runtime like eager PyTorch. It is written against
the kit's first API (the positional RuntimeVersions, judge_blob with a switch
of its own, Header with version triples, load_runtime), and stays so to prove
those spellings keep working; new backends start from the template that
``executorch-conformance new-backend`` renders (tests/kit/test_new_backend.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

import backend_kit
from backend_kit.header import MAGIC

VENDOR = Path(__file__).resolve().parent / "example_vendor"
sys.path.insert(0, str(VENDOR))

import example_vendor  # noqa: E402

# The full tier (CI; bash scripts/test.sh --full): builds the kit's example vendor backend
pytestmark = pytest.mark.full


def _tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else name


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The runtime configured, built and installed into a site-packages-like prefix."""
    import executorch

    build, prefix = tmp_path_factory.mktemp("vendor-build"), tmp_path_factory.mktemp("site-packages")
    for cmd in (
        [
            _tool("cmake"),
            "-S",
            str(VENDOR / "runtime"),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}",
            f"-DBackendKit_DIR={backend_kit.cmake_dir()}",
            f"-DCMAKE_PREFIX_PATH={next(iter(executorch.__path__))}",
            "-DCMAKE_BUILD_TYPE=Release",
        ],
        [_tool("cmake"), "--build", str(build)],
        [_tool("cmake"), "--install", str(build), "--prefix", str(prefix)],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return prefix / "example_vendor" / "lib" / example_vendor.LIBRARY


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.neg(x) + 1.0  # the add stays on ExecuTorch's CPU kernels


def test_build_info_names_the_executorch_built_against(installed):
    from executorch.version import __version__

    info = json.loads((installed.parent / "build_info.json").read_text())
    assert info["executorch_version"] == __version__
    assert info["backend_version"] == "0.1.0" and info["backend_kit_version"] == backend_kit.__version__


def test_lowered_program_runs_like_eager(installed, tmp_path):
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    example_vendor.load_runtime(installed)
    assert example_vendor.BACKEND_ID in Runtime.get().backend_registry.registered_backend_names

    model, example = Model().eval(), (torch.randn(3, 5),)
    program = to_edge_transform_and_lower(
        torch.export.export(model, example), partitioner=[example_vendor.ExampleNegPartitioner()]
    ).to_executorch()
    pte = tmp_path / "neg.pte"
    pte.write_bytes(program.buffer)
    assert b"ExampleNegBackend" in program.buffer and MAGIC in program.buffer

    (out,) = Runtime.get().load_program(pte).load_method("forward").execute(list(example))
    torch.testing.assert_close(out, model(*example))


def test_installed_library_runpath_is_relative(installed):
    with open(installed, "rb") as f:
        dynamic = next(s for s in ELFFile(f).iter_sections() if isinstance(s, DynamicSection))
        needed = [t.needed for t in dynamic.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
        runpath = [t.runpath for t in dynamic.iter_tags() if t.entry.d_tag == "DT_RUNPATH"]
    assert "libexecutorch.so" in needed
    entries = runpath[0].split(":")
    assert "$ORIGIN/../../executorch/lib" in entries
    assert not [e for e in entries if e.startswith("/")], entries
