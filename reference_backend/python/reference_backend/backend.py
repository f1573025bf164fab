"""The AOT half of the backend: ``ReferenceBackend.preprocess``.

The class name is the backend id stored in the .pte and looked up in the
runtime's registry, so it must never change (contract clause C-AOT-2).
"""

from __future__ import annotations

import copy

import torch
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.version import __version__ as executorch_version
from torch.export import ExportedProgram

from backend_kit.aot import schema_name
from backend_kit.header import Header, crc32c, encode, version_triple
from reference_backend.compile_specs import MAX_MEMORY_KEY, CompileSpecError, parse_compile_specs
from reference_backend.named_data import data_store_output
from reference_backend.passes import fold_quantized
from reference_backend.serialize import serialize_payload
from reference_backend.version import __version__

#: Bytes each buffer is rounded up to in the memory bound (the runtime's arena rounds to 64).
_BUFFER_ROUNDING = 64


def memory_bound(edge_program: ExportedProgram, named_bytes: int = 0) -> int | None:
    """An upper bound of the memory the runtime allocates for the subgraph: one
    buffer per tensor of the graph (inputs, constants, results), at least 4
    bytes an element, each rounded up to 64 bytes, less ``named_bytes`` (the
    named data, which the runtime reads in place). None when a shape is not
    static (no bound is recorded then, unless the compile spec gives one)."""
    total = 0
    for node in edge_program.graph.nodes:
        if node.op not in ("placeholder", "call_function"):
            continue
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            continue
        if not all(type(d) is int for d in val.shape):
            return None
        numel = 1
        for d in val.shape:
            numel *= d
        nbytes = numel * max(val.element_size(), 4)
        total += -(-nbytes // _BUFFER_ROUNDING) * _BUFFER_ROUNDING
    return max(total - named_bytes, 0)


def copy_sharing_constants(program: ExportedProgram) -> ExportedProgram:
    """A copy of ``program`` whose graph and tables are its own and whose constant tensors are shared:
    this backend reads constants and never writes them (the quantized fold replaces nodes and reads
    weights), so a rewrite of the copy leaves ``program`` as it was without a copy of its weights."""
    shared = {
        id(tensor): tensor
        for table in (program.state_dict, program.constants)
        for tensor in table.values()
        if isinstance(tensor, torch.Tensor)
    }
    return copy.deepcopy(program, shared)


def build_result(
    edge_program: ExportedProgram, compile_specs: list[CompileSpec], backend_id: str
) -> PreprocessResult:
    """Contract header + graph payload for the delegated subgraph ``edge_program``,
    and the named data the payload refers to (compile spec named_data_threshold)."""
    options = parse_compile_specs(compile_specs)
    # Fold the quantize/dequantize nodes around quantized operators into the
    # runtime's integer operators (a no-op for a float subgraph), on a copy:
    # ExecuTorch keeps the program it hands to preprocess.
    if any(
        n.op == "call_function" and (schema_name(n.target) or "").startswith("quantized_decomposed::")
        for n in edge_program.graph.nodes
    ):
        edge_program = fold_quantized(copy_sharing_constants(edge_program))
    payload = serialize_payload(edge_program, options)
    limit = named = None
    if options.header_format >= 2:
        need = memory_bound(edge_program, sum(entry.nbytes for entry, _, _ in payload.named))
        limit = options.max_memory_bytes if options.max_memory_bytes is not None else need
        if need is not None and limit < need:
            raise CompileSpecError(
                f"the delegated subgraph needs up to {need} bytes of memory at run time, more than the "
                f"compile spec {MAX_MEMORY_KEY!r} allows ({limit})"
            )
        named = tuple(crc32c(raw) for _, _, raw in payload.named)
    header = Header(
        backend_id=backend_id,
        blob_format=options.blob_format,
        backend_version=version_triple(__version__),
        executorch_version=version_triple(executorch_version),
        header_format_version=options.header_format,
        memory_limit=limit,
        named_data_checksums=named or None,
    )
    return PreprocessResult(
        processed_bytes=encode(header, payload.data),
        data_store_output=data_store_output(payload.named, options.named_data_file),
    )


def build_blob(edge_program: ExportedProgram, compile_specs: list[CompileSpec], backend_id: str) -> bytes:
    """The blob alone. With named data in the compile specs, the blob refers to
    data that only ``build_result`` returns: a preprocess must return that too."""
    return build_result(edge_program, compile_specs, backend_id).processed_bytes


class ReferenceBackend(BackendDetails):
    """Turns a delegated subgraph into a blob: contract header + graph payload,
    plus named data for large constants when the compile specs ask for it."""

    @staticmethod
    def preprocess(edge_program: ExportedProgram, compile_specs: list[CompileSpec]) -> PreprocessResult:
        return build_result(edge_program, compile_specs, ReferenceBackend.__name__)

    @classmethod
    def copy_exported_program_for_preprocess(
        cls, edge_program: ExportedProgram, compile_specs: list[CompileSpec]
    ) -> ExportedProgram:
        """The program ``preprocess`` gets, ExecuTorch's hook for the copy it makes of each delegated
        subgraph (from 1.5.0): ``copy_sharing_constants`` instead of a deep copy of the weights too, which
        doubled the memory of the lowering (at NDATA-5's 4.25 GiB, a third of its time went to that copy)."""
        return copy_sharing_constants(edge_program)
