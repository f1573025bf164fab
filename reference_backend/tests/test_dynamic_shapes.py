"""Programs exported with dimensions bounded above (torch.export.Dim(..., max=...)):
one delegated program runs at every size from 1 to the bounds and matches eager
PyTorch, with its outputs resized to each call's sizes; a size above a bound is
refused with an error and a log line naming the input, the dimension and the
bound, never a crash and never an output (contract C-DYN-1, C-DYN-2)."""

from __future__ import annotations

import re
import struct

import pytest
import torch
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime

import reference_backend
from backend_kit.header import payload_of
from reference_backend.pte_blobs import delegate_blobs

BATCH, TOKENS = 4, 8


class TokenMLP(torch.nn.Module):
    """x [batch, tokens, 16] -> linear, relu, linear, plus x (a broadcast-free residual)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))) + x


@pytest.fixture(scope="module")
def program(runtime):
    torch.manual_seed(0)
    model = TokenMLP().eval()
    dims = {0: torch.export.Dim("batch", max=BATCH), 1: torch.export.Dim("tokens", max=TOKENS)}
    exported = torch.export.export(model, (torch.randn(2, 3, 16),), dynamic_shapes=({**dims},))
    edge = to_edge_transform_and_lower(exported, partitioner=[reference_backend.ReferencePartitioner()])
    pte = edge.to_executorch().buffer
    return model, pte, Runtime.get().load_program(pte).load_method("forward")


def log_lines(text: str) -> list[str]:
    return [
        line[line.index("ReferenceBackend:") :] for line in text.splitlines() if "] ReferenceBackend:" in line
    ]


def test_the_whole_program_is_one_delegate_with_bounded_dims(program):
    _, pte, _ = program
    (blob,) = delegate_blobs(pte)
    payload = bytes(payload_of(blob.data))
    # Format 1.3 (docs/blob-header.md): 40 bytes of counts, 48-byte value records, then the input ids.
    num_values, num_inputs = struct.unpack_from("<II", payload, 0)
    (graph_input,) = struct.unpack_from(f"<{num_inputs}I", payload, 40 + 48 * num_values)
    record = payload[40 + 48 * graph_input : 40 + 48 * (graph_input + 1)]
    assert record[3] == 0b011  # dims 0 and 1 dynamic, their bounds in dims[]
    assert struct.unpack_from("<3I", record, 4) == (BATCH, TOKENS, 16)


@pytest.mark.parametrize(
    ("batch", "tokens"),
    [(1, 1), (1, TOKENS), (BATCH, 1), (2, 4), (3, 5), (BATCH, TOKENS), (2, 3)],
    ids=lambda v: str(v),
)
def test_every_size_up_to_the_bounds_runs_and_matches_eager(program, batch, tokens):
    model, _, method = program
    x = torch.randn(batch, tokens, 16, generator=torch.Generator().manual_seed(batch * 10 + tokens))
    (out,) = method.execute([x])
    assert out.shape == (batch, tokens, 16)  # resized to this call's sizes, not the bounds
    with torch.no_grad():
        torch.testing.assert_close(out, model(x), rtol=1e-5, atol=1e-5)


def test_sizes_can_shrink_and_grow_between_calls(program):
    model, _, method = program
    for batch, tokens in [(BATCH, TOKENS), (1, 1), (BATCH, TOKENS), (2, 7)]:
        x = torch.randn(batch, tokens, 16)
        (out,) = method.execute([x])
        with torch.no_grad():
            torch.testing.assert_close(out, model(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("shape", "fragment"),
    [
        ((BATCH + 1, 1, 16), f"input 0 dimension 0 is {BATCH + 1}, above its upper bound {BATCH}"),
        ((1, TOKENS + 1, 16), f"input 0 dimension 1 is {TOKENS + 1}, above its upper bound {TOKENS}"),
        ((1, 2 * TOKENS, 16), f"input 0 dimension 1 is {2 * TOKENS}, above its upper bound {TOKENS}"),
    ],
    ids=["batch", "tokens", "tokens-twice"],
)
def test_a_size_above_one_bound_is_refused_by_the_backend(program, capfd, shape, fragment):
    """The element count fits ExecuTorch's capacity (batch x tokens), so ExecuTorch
    passes the input on; the backend refuses it (InvalidArgument, 0x12)."""
    _, _, method = program
    capfd.readouterr()
    with pytest.raises(RuntimeError, match=re.escape("0x12")):
        method.execute([torch.randn(*shape)])
    (line,) = log_lines(capfd.readouterr().err)
    assert (
        line
        == f"ReferenceBackend: execute: refused: {fragment} (the bound given to torch.export.Dim at export)"
    )


def test_a_size_above_the_capacity_is_refused_by_executorch(program, capfd):
    _, _, method = program
    capfd.readouterr()
    with pytest.raises(RuntimeError, match=re.escape("0x10")):
        method.execute([torch.randn(BATCH + 1, TOKENS + 1, 16)])
    assert "Attempted to resize a bounded tensor" in capfd.readouterr().err


def test_the_method_still_runs_after_a_refusal(program):
    model, _, method = program
    with pytest.raises(RuntimeError):
        method.execute([torch.randn(1, TOKENS + 1, 16)])
    x = torch.randn(3, 2, 16)
    (out,) = method.execute([x])
    with torch.no_grad():
        torch.testing.assert_close(out, model(x), rtol=1e-5, atol=1e-5)


def test_a_static_dimension_of_another_size_is_refused(program):
    """The feature dimension (16) is static: 8 is refused (by ExecuTorch or the backend), not run."""
    _, _, method = program
    with pytest.raises(RuntimeError, match="error"):
        method.execute([torch.randn(1, 1, 8)])
