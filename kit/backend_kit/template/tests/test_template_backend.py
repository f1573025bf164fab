"""The installed backend: lowering delegates what it claims, the runtime runs
it like eager PyTorch, and a blob whose header claims a format this runtime
does not read is refused."""

from __future__ import annotations

import pytest
import torch
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime

import template_backend
from backend_kit.header import Header, decode, encode
from template_backend.ops import OPS
from template_backend.version import BLOB_FORMAT


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.abs(torch.neg(x) + 1.0)  # the add stays on ExecuTorch's CPU kernels


@pytest.fixture(scope="module")
def program() -> bytes:
    example = (torch.randn(4, 7),)
    lowered = to_edge_transform_and_lower(
        torch.export.export(Model(), example), partitioner=[template_backend.TemplateBackendPartitioner()]
    )
    return lowered.to_executorch().buffer


def blobs(pte: bytes) -> list[bytes]:
    """The backend's blobs in a .pte, found by the contract header's magic: each is
    header_length (u16 at offset 4) plus payload_size (u64 at offset 24) bytes."""
    found, at = [], pte.find(b"ECVH")
    while at >= 0:
        size = int.from_bytes(pte[at + 4 : at + 6], "little") + int.from_bytes(
            pte[at + 24 : at + 32], "little"
        )
        found.append(pte[at : at + size])
        at = pte.find(b"ECVH", at + size)
    return found


def test_both_operators_are_delegated_with_a_contract_header(program):
    found = blobs(program)
    assert len(found) == 2
    for blob in found:
        header = decode(blob)
        assert header.backend_id == template_backend.BACKEND_ID
        assert header.blob_format == BLOB_FORMAT


def test_runs_like_eager(program, tmp_path):
    template_backend.load_runtime()
    assert template_backend.BACKEND_ID in Runtime.get().backend_registry.registered_backend_names
    pte = tmp_path / "model.pte"
    pte.write_bytes(program)
    x = torch.randn(4, 7)
    (out,) = Runtime.get().load_program(pte).load_method("forward").execute([x])
    torch.testing.assert_close(out, Model()(x))


class OneOperator(torch.nn.Module):
    def __init__(self, schema: str) -> None:
        super().__init__()
        name, _, overload = schema.split("::")[1].partition(".")
        self.op = getattr(getattr(torch.ops.aten, name), overload or "default")

    def forward(self, x):
        return self.op(x)


@pytest.mark.parametrize("schema", sorted(OPS))
def test_every_operator_in_ops_is_delegated_and_runs_like_eager(schema, tmp_path):
    """ops.py and the runtime's run_op agree: an opcode the runtime does not know is refused at init."""
    template_backend.load_runtime()
    model, x = OneOperator(schema), torch.randn(3, 5)
    program = to_edge_transform_and_lower(
        torch.export.export(model, (x,)), partitioner=[template_backend.TemplateBackendPartitioner()]
    ).to_executorch()
    assert len(blobs(program.buffer)) == 1, f"{schema} was not delegated"
    pte = tmp_path / "model.pte"
    pte.write_bytes(program.buffer)
    (out,) = Runtime.get().load_program(pte).load_method("forward").execute([x])
    torch.testing.assert_close(out, model(x))


def test_a_blob_of_a_newer_format_is_refused(program, tmp_path):
    template_backend.load_runtime()
    blob = blobs(program)[0]
    header = decode(blob)
    forged = Header(
        header.backend_id, (header.blob_format[0] + 1, 0), header.backend_version, header.executorch_version
    )
    newer = encode(forged, blob[header.header_length :])
    assert len(newer) == len(blob)
    pte = tmp_path / "forged.pte"
    pte.write_bytes(program.replace(blob, newer, 1))
    with pytest.raises(RuntimeError, match=r"0x:?30"):
        Runtime.get().load_program(pte).load_method("forward")
