"""Shared state of one suite run: the descriptor, and each sample model
exported, lowered and serialized once, so checks that need the same program
share it."""

from __future__ import annotations

import dataclasses
import functools
import tempfile
from pathlib import Path
from typing import Any

from conformance.descriptor import BackendDescriptor
from conformance.pte import Delegate, PteProgram, read_pte
from conformance.registry import CheckFailed, NotApplicable


@dataclasses.dataclass(frozen=True)
class PartitionRecord:
    """What one partitioner's ``partition()`` returned during real lowering,
    captured before ExecuTorch rewrites the graph."""

    partitioner: str
    #: tag -> (backend_id, ((key, value), ...)) from the DelegationSpecs
    tags: dict[str, tuple[str, tuple[tuple[str, bytes], ...]]]
    #: (node name, operator schema name, tag) for every tagged call_function
    tagged_ops: tuple[tuple[str, str, str], ...]
    #: tags found on nodes (placeholders included)
    node_tags: frozenset[str]


@dataclasses.dataclass
class Lowered:
    """A sample model after lowering: the edge manager, the .pte bytes and
    what each partitioner claimed."""

    edge: Any
    pte: bytes
    records: list[PartitionRecord]


@dataclasses.dataclass
class NamedDataLowered:
    """The named-data sample lowered with the named-data partitioners: the .pte
    and the .ptd files ExecuTorch wrote next to it (file name -> path)."""

    pte: bytes
    pte_path: Path
    data_files: dict[str, Path]
    records: list[PartitionRecord]


def _op_name(target: Any) -> str:
    name = getattr(target, "name", None)
    return name() if callable(name) else str(target)


def recording(partitioner: Any, records: list[PartitionRecord]) -> Any:
    """Wraps a vendor partitioner so that its PartitionResult is recorded."""
    from executorch.exir.backend.partitioner import Partitioner

    class Recording(Partitioner):
        def __init__(self) -> None:
            super().__init__()

        def ops_to_not_decompose(self, ep):
            return partitioner.ops_to_not_decompose(ep)

        def partition(self, exported_program):
            result = partitioner.partition(exported_program)
            tags = {
                tag: (spec.backend_id, tuple((cs.key, bytes(cs.value)) for cs in spec.compile_specs))
                for tag, spec in result.partition_tags.items()
            }
            graph = result.tagged_exported_program.graph
            tagged = tuple(
                (n.name, _op_name(n.target), n.meta["delegation_tag"])
                for n in graph.nodes
                if n.op == "call_function" and n.meta.get("delegation_tag")
            )
            node_tags = frozenset(n.meta["delegation_tag"] for n in graph.nodes if n.meta.get("delegation_tag"))
            records.append(PartitionRecord(type(partitioner).__qualname__, tags, tagged, node_tags))
            return result

    return Recording()


class Context:
    """Lazily computed artifacts for the checks; failures are remembered and
    re-raised as CheckFailed by every check that needs the artifact."""

    def __init__(self, descriptor: BackendDescriptor) -> None:
        self.descriptor = descriptor
        self._runtime_error: BaseException | None = None
        self._runtime_loaded = False
        self._lowered: dict[str, Lowered | CheckFailed] = {}
        self._failed_records: dict[str, list[PartitionRecord]] = {}
        self.last_records: list[PartitionRecord] = []
        self._named_data: NamedDataLowered | CheckFailed | None = None
        self._scratch: tempfile.TemporaryDirectory | None = None

    @property
    def primary(self) -> str:
        """The name of the first sample model, used by single-program checks."""
        return self.descriptor.sample_models[0].name

    @functools.lru_cache(maxsize=None)
    def model(self, name: str) -> tuple[Any, tuple[Any, ...]]:
        """(module in eval mode, inputs) of a sample model, made with a fixed seed."""
        import torch

        torch.manual_seed(0)
        module, inputs = self.descriptor.sample(name).make()
        return module.eval(), tuple(inputs)

    def export(self, name: str):
        import torch

        module, inputs = self.model(name)
        return torch.export.export(module, inputs)

    def partitioners(self) -> list[Any]:
        """Fresh partitioner instances from the descriptor."""
        partitioners = list(self.descriptor.make_partitioners())
        if not partitioners:
            raise CheckFailed("make_partitioners() returned no partitioner")
        return partitioners

    def lower_fresh(self, name: str) -> Lowered:
        """Exports and lowers ``name`` anew (no cache), with fresh partitioners."""
        self.last_records = records = []
        try:
            from executorch.exir import to_edge_transform_and_lower

            wrapped = [recording(p, records) for p in self.partitioners()]
            edge = to_edge_transform_and_lower(self.export(name), partitioner=wrapped)
            return Lowered(edge=edge, pte=edge.to_executorch().buffer, records=records)
        except CheckFailed:
            raise
        except Exception as exc:  # the vendor's code failed: that is the finding
            raise CheckFailed(
                f"lowering sample model {name!r} with the backend's partitioners failed: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def partition_records(self, name: str) -> list[PartitionRecord]:
        """What the partitioners claimed for ``name``, even if lowering then failed."""
        try:
            return self.lowered(name).records
        except CheckFailed:
            if self._failed_records.get(name):
                return self._failed_records[name]
            raise

    def lowered(self, name: str) -> Lowered:
        """``lower_fresh(name)`` once; a failure is remembered and raised again."""
        if name not in self._lowered:
            try:
                self._lowered[name] = self.lower_fresh(name)
            except CheckFailed as exc:
                self._lowered[name] = exc
                self._failed_records[name] = list(self.last_records)
        result = self._lowered[name]
        if isinstance(result, CheckFailed):
            raise CheckFailed(str(result))
        return result

    def pte(self, name: str) -> bytes:
        return self.lowered(name).pte

    def scratch_dir(self) -> Path:
        """A directory that lives as long as this context."""
        if self._scratch is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="conformance-")
        return Path(self._scratch.name)

    def require_named_data(self):
        """The descriptor's NamedDataSupport, or NotApplicable if it declares none."""
        support = self.descriptor.named_data
        if support is None:
            raise NotApplicable("the descriptor declares no named data support (named_data is None)")
        return support

    def named_data_lowered(self) -> NamedDataLowered:
        """The named-data sample lowered once with the named-data partitioners,
        written as model.pte plus its .ptd files; a failure is remembered."""
        if self._named_data is None:
            support = self.require_named_data()
            records: list[PartitionRecord] = []
            try:
                from executorch.exir import to_edge_transform_and_lower

                partitioners = list(support.make_partitioners())
                if not partitioners:
                    raise CheckFailed("named_data.make_partitioners() returned no partitioner")
                wrapped = [recording(p, records) for p in partitioners]
                edge = to_edge_transform_and_lower(self.export(support.sample), partitioner=wrapped)
                program = edge.to_executorch()
                out = self.scratch_dir() / "named_data"
                out.mkdir()
                pte = program.buffer
                (out / "model.pte").write_bytes(pte)
                program.write_tensor_data_to_file(str(out))  # TAG.ptd per external tag
                files = {p.name: p for p in sorted(out.glob("*.ptd"))}
                self._named_data = NamedDataLowered(pte, out / "model.pte", files, records)
            except CheckFailed as exc:
                self._named_data = exc
            except Exception as exc:  # the vendor's code failed: that is the finding
                self._named_data = CheckFailed(
                    f"lowering sample model {support.sample!r} with named_data.make_partitioners() failed: "
                    f"{type(exc).__name__}: {exc}"
                )
        if isinstance(self._named_data, CheckFailed):
            raise CheckFailed(str(self._named_data))
        return self._named_data

    @functools.lru_cache(maxsize=None)
    def program(self, name: str) -> PteProgram:
        return read_pte(self.pte(name))

    def backend_delegates(self, name: str) -> list[Delegate]:
        """The delegates of this backend in the .pte of ``name``."""
        return [d for d in self.program(name).delegates() if d.backend_id == self.descriptor.backend_id]

    def delegated_samples(self) -> list[str]:
        return [m.name for m in self.descriptor.sample_models if m.delegated]

    def require_runtime(self) -> None:
        """Loads the backend's runtime into this process once, or raises
        NotApplicable (no runtime declared) / CheckFailed (loading failed)."""
        if self.descriptor.load_runtime is None:
            raise NotApplicable("the descriptor declares no runtime for this host (load_runtime is None)")
        if not self._runtime_loaded and self._runtime_error is None:
            try:
                self.descriptor.load_runtime()
                self._runtime_loaded = True
            except Exception as exc:
                self._runtime_error = exc
        if self._runtime_error is not None:
            raise CheckFailed(
                f"loading the runtime failed: {type(self._runtime_error).__name__}: {self._runtime_error}"
            )

    def run(self, pte: bytes, inputs, method: str = "forward"):
        """Loads ``pte`` with the standard runtime API and executes ``method``."""
        from executorch.runtime import Runtime

        return Runtime.get().load_program(pte).load_method(method).execute(list(inputs))
