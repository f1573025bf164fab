"""Shared fixtures for the .pte reader tests: real programs exported with executorch.

The reader itself never imports executorch; only these fixtures do, to produce
files to read. Exporting costs seconds, so it happens once per test session.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

_REPO_ROOT = Path(__file__).resolve().parents[2]
if str(_REPO_ROOT) not in sys.path:  # so that plain `pytest` finds `conformance`
    sys.path.insert(0, str(_REPO_ROOT))

# Compile specs and blob of the test-only backend below, checked byte for byte.
DEMO_BACKEND_ID = "PteReaderDemoBackend"
DEMO_COMPILE_SPECS = (
    ("mode", b"fast"),
    ("threads", (4).to_bytes(4, "little")),
    ("binary", bytes(range(256))),
    ("empty", b""),
)
DEMO_BLOB_MAGIC = b"DEMO"


@dataclass(frozen=True)
class PteFiles:
    """Paths of the exported programs, by how they were exported."""

    plain: Path  # Linear+ReLU, no delegation
    xnnpack: Path  # lowered to XNNPACK, delegate blob in a segment (default)
    xnnpack_inline: Path  # lowered to XNNPACK, extract_delegate_segments=False
    demo: Path  # lowered to the demo backend, blob in a segment
    demo_inline: Path  # lowered to the demo backend, blob inline
    no_segments: Path  # weightless model, inline blob: no segments, no extended header

    def all(self) -> dict[str, Path]:
        return dict(vars(self))


def _export_all(out: Path) -> PteFiles:
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import ExecutorchBackendConfig, to_edge, to_edge_transform_and_lower
    from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
    from executorch.exir.backend.compile_spec_schema import CompileSpec
    from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult

    # The id stored in the .pte is the class name; lowering finds the class by it.
    demo_backend = type(
        DEMO_BACKEND_ID,
        (BackendDetails,),
        {
            "preprocess": staticmethod(
                lambda edge_program, compile_specs: PreprocessResult(
                    processed_bytes=DEMO_BLOB_MAGIC + b"".join(s.key.encode() for s in compile_specs)
                )
            )
        },
    )
    assert demo_backend.__name__ == DEMO_BACKEND_ID

    class DemoPartitioner(Partitioner):
        """Delegates every operator to the demo backend."""

        def __init__(self) -> None:
            super().__init__()
            specs = [CompileSpec(key, value) for key, value in DEMO_COMPILE_SPECS]
            self.delegation_spec = DelegationSpec(DEMO_BACKEND_ID, specs)

        def partition(self, exported_program):  # type: ignore[no-untyped-def]
            for node in exported_program.graph_module.graph.nodes:
                if node.op == "call_function":
                    node.meta["delegation_tag"] = "demo"
            return PartitionResult(
                tagged_exported_program=exported_program,
                partition_tags={"demo": self.delegation_spec},
            )

    class LinearRelu(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(4, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.linear(x))

    class Weightless(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return torch.relu(x + y)

    torch.manual_seed(0)
    linear = torch.export.export(LinearRelu().eval(), (torch.randn(2, 4),))
    weightless = torch.export.export(Weightless().eval(), (torch.randn(2, 4), torch.randn(2, 4)))
    inline = ExecutorchBackendConfig(extract_delegate_segments=False)

    def write(name: str, program) -> Path:  # type: ignore[no-untyped-def]
        path = out / f"{name}.pte"
        path.write_bytes(program.buffer)
        return path

    def lower(ep, partitioner):  # type: ignore[no-untyped-def]
        return to_edge_transform_and_lower(ep, partitioner=[partitioner])

    return PteFiles(
        plain=write("plain", to_edge(linear).to_executorch()),
        xnnpack=write("xnnpack", lower(linear, XnnpackPartitioner()).to_executorch()),
        xnnpack_inline=write("xnnpack_inline", lower(linear, XnnpackPartitioner()).to_executorch(inline)),
        demo=write("demo", lower(linear, DemoPartitioner()).to_executorch()),
        demo_inline=write("demo_inline", lower(linear, DemoPartitioner()).to_executorch(inline)),
        no_segments=write("no_segments", lower(weightless, XnnpackPartitioner()).to_executorch(inline)),
    )


@pytest.fixture(scope="session")
def pte_files(tmp_path_factory: pytest.TempPathFactory) -> PteFiles:
    """Real .pte files, exported once per session (several seconds)."""
    with warnings.catch_warnings():  # export is noisy with deprecations not ours to fix
        warnings.simplefilter("ignore")
        return _export_all(tmp_path_factory.mktemp("pte"))


@pytest.fixture(scope="session")
def pte_bytes(pte_files: PteFiles) -> dict[str, bytes]:
    """The contents of every exported file, by fixture name."""
    return {name: path.read_bytes() for name, path in pte_files.all().items()}


def field_offset(obj, accessor) -> int:  # type: ignore[no-untyped-def]
    """File offset of the field that a generated accessor reads (for patching files)."""
    from conformance.pte._checked import slot_of

    rel = obj._tab.Offset(slot_of(accessor))
    assert rel, f"{accessor.__qualname__} is absent (default value) in this file"
    return obj._tab.Pos + rel


@pytest.fixture(scope="session")
def locate():  # type: ignore[no-untyped-def]
    """``locate(obj, accessor)``: file offset of a field, see ``field_offset``."""
    return field_offset


@dataclass(frozen=True)
class DemoBackend:
    """What the demo backend writes into ``PteFiles.demo``/``demo_inline``."""

    backend_id: str = DEMO_BACKEND_ID
    compile_specs: tuple[tuple[str, bytes], ...] = DEMO_COMPILE_SPECS
    blob: bytes = DEMO_BLOB_MAGIC + b"".join(key.encode() for key, _ in DEMO_COMPILE_SPECS)


@pytest.fixture(scope="session")
def demo_backend() -> DemoBackend:
    return DemoBackend()
