"""BackendDetails subclasses of the broken backends (class name = backend id)."""

from __future__ import annotations

import os
import struct

from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult

from reference_backend.backend import build_blob, build_result
from backend_kit.header import Header, decode, encode, payload_of


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
