"""BackendDetails subclasses of the broken backends (class name = backend id)."""

from __future__ import annotations

import copy
import dataclasses
import os
import struct

import torch
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult

from backend_kit.aot import schema_name
from backend_kit.header import Header, decode, encode, payload_of
from reference_backend.backend import build_blob, build_result
from reference_backend.passes import fold_quantized


class NondeterministicBackend(BackendDetails):
    """Appends random bytes to every payload."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        blob = build_blob(edge_program, compile_specs, "NondeterministicBackend")
        header = decode(blob)
        payload = bytes(payload_of(blob)) + os.urandom(16)
        return PreprocessResult(processed_bytes=encode(_fields(header), payload))


class HeaderlessBackend(BackendDetails):
    """Writes the payload without the contract header."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        blob = build_blob(edge_program, compile_specs, "HeaderlessBackend")
        return PreprocessResult(processed_bytes=bytes(payload_of(blob)))


class WrongNumericsBackend(BackendDetails):
    """Scales the first constant of the payload by 1.5 (a wrong weight)."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        blob = build_blob(edge_program, compile_specs, "WrongNumericsBackend")
        header = decode(blob)
        payload = bytearray(payload_of(blob))
        constant_bytes = struct.unpack_from("<Q", payload, 16)[0]
        if constant_bytes:
            at = len(payload) - constant_bytes
            (value,) = struct.unpack_from("<f", payload, at)
            struct.pack_into("<f", payload, at, value * 1.5 + 0.25)
        return PreprocessResult(processed_bytes=encode(_fields(header), bytes(payload)))


class LenientBackend(BackendDetails):
    """A correct exporter; its runtime (runtime/lenient_backend.cpp) ignores blob versions."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        return PreprocessResult(processed_bytes=build_blob(edge_program, compile_specs, "LenientBackend"))


def _fields(header) -> Header:
    return Header(header.backend_id, header.blob_format, header.backend_version, header.executorch_version)


class MisbehavingBackend(BackendDetails):
    """A correct exporter; its runtime (runtime/misbehaving_backend.cpp) crashes or hangs on demand and
    otherwise runs the reference runtime, built in under the id written into the header."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        return build_result(edge_program, compile_specs, "MisbehavingInner")


class ProcessDependentBackend(BackendDetails):
    """Appends hash() of a string to every payload: the same within a process, different in the next
    (Python randomizes str hashes per process), so only a lowering in a new process shows it."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        blob = build_blob(edge_program, compile_specs, "ProcessDependentBackend")
        header = decode(blob)
        payload = bytes(payload_of(blob)) + struct.pack("<q", hash("executorch-conformance"))
        return PreprocessResult(processed_bytes=encode(_fields(header), payload))


#: Index of the output zero point in the arguments of each quantized op of reference_backend.quantized_ops.
_OUT_ZERO_ARG = {
    "reference_backend::qlinear": 6,
    "reference_backend::qconv2d": 10,
    "reference_backend::qadd": 4,
    "reference_backend::qrelu": 2,
}


class RequantOffByOneBackend(BackendDetails):
    """Requantizes one step off: after the reference fold (reference_backend.passes), every quantized
    op's output zero point is written one higher than the one its output is read with, so each int8
    result is one quantization step too high, and the error grows along a chain of quantized ops. Its
    runtime is the reference runtime under this id (runtime/CMakeLists.txt)."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        program = fold_quantized(copy.deepcopy(edge_program))
        for node in program.graph.nodes:
            index = _OUT_ZERO_ARG.get(schema_name(node.target) or "")
            if index is not None:
                args = list(node.args)
                args[index] += 1
                node.args = tuple(args)
        return build_result(program, compile_specs, "RequantOffByOneBackend")


#: The opcode GreedyBackend writes for exp: one past the last the reference runtime has (22).
STOLEN_OPCODE = 23


class GreedyBackend(BackendDetails):
    """Writes the exp its partitioner claims (descriptors.STEALS_FROM_XNNPACK) as opcode 23, which
    its runtime, the reference runtime under this id, does not have: the blob is refused at load."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        program = copy.deepcopy(edge_program)
        ops = [n for n in program.graph.nodes if n.op == "call_function"]
        stolen = [i for i, n in enumerate(ops) if schema_name(n.target) == "aten::exp"]
        for i in stolen:  # serialized as relu (same operands and shape), then given the unknown opcode
            ops[i].target = torch.ops.aten.relu.default
        blob = build_blob(program, compile_specs, "GreedyBackend")
        header = decode(blob)
        if header.blob_format != (1, 4):
            raise ValueError(f"GreedyBackend writes blob format 1.4 only, not {header.blob_format}")
        payload = bytearray(payload_of(blob))
        values, inputs, outputs, _, _ = struct.unpack_from("<IIIIQ", payload, 0)
        # 1.4 layout, the same as 1.3's (docs/blob-header.md): 40-byte counts, 48-byte values, u32 ids, 32-byte op records.
        ops_at = 40 + 48 * values + 4 * (inputs + outputs)
        for i in stolen:
            payload[ops_at + 32 * i] = STOLEN_OPCODE
        return PreprocessResult(processed_bytes=encode(_fields(header), bytes(payload)))


class CrashesAboveBoundBackend(BackendDetails):
    """A correct exporter; its runtime (runtime/crashes_above_bound_backend.cpp) trusts the sizes it is
    given and dies with SIGSEGV on an input dimension above its bound, and otherwise runs the reference
    runtime built in under the id written into the header."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        return build_result(edge_program, compile_specs, "CrashesAboveBoundInner")


class ScratchesStateBackend(BackendDetails):
    """A correct exporter; its runtime (runtime/state_defects_backend.cpp) zeroes its inputs once a call
    is done, which only a mutated buffer (a KV cache) outlives, and otherwise runs the reference runtime
    built in under the id written into the header."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        return build_result(edge_program, compile_specs, "ScratchesStateInner")


class ExtraIdBackend(BackendDetails):
    """A correct exporter; its runtime (runtime/extra_id_backend.cpp) is the reference runtime registered
    under this id and under "GenericNpuBackend" as well."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        return build_result(edge_program, compile_specs, "ExtraIdBackend")


class BindsOnceBackend(BackendDetails):
    """A correct exporter; its runtime (runtime/state_defects_backend.cpp) binds the input buffers of
    identical delegates once for every load, so two loaded methods share the first one's state."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        return build_result(edge_program, compile_specs, "BindsOnceInner")


class LastInitWinsBackend(BackendDetails):
    """A correct exporter; its runtime (runtime/last_init_wins_backend.cpp) executes every handle with the graph of the latest init, so of two methods of one program loaded
    together, one runs the other's."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        return build_result(edge_program, compile_specs, "LastInitWinsInner")  # the runtime built in with it


class NarrowOffsetsBackend(BackendDetails):
    """A correct exporter whose headers record no named-data checksums (the reference runtime built into its
    runtime would otherwise refuse the wrong bytes at load); its runtime (runtime/narrow_offsets_backend.cpp)
    packs the named data into one arena and keeps each key's offset in 32 bits, so weights stored past
    4 GiB are read from the arena's start."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        made = build_result(edge_program, compile_specs, "NarrowOffsetsInner")  # the runtime built in with it
        blob = made.processed_bytes
        header = dataclasses.replace(decode(blob), named_data_checksums=None)
        return PreprocessResult(
            processed_bytes=encode(header, payload_of(blob)), data_store_output=made.data_store_output
        )


class FlushesSubnormalsBackend(BackendDetails):
    """A correct exporter; its runtime (runtime/flushes_subnormals_backend.cpp) is the reference runtime run
    with flush-to-zero and denormals-are-zero on, under the id written into the header."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        return build_result(edge_program, compile_specs, "FlushesSubnormalsInner")
