"""Crafted programs the runtime must refuse, fast, with one clear line and a
live process (issue 17). Each is built here with the project's own codec
(backend_kit.header, checksum recomputed) and loaded in a child Python, so
that a regression shows as a dead child (SIGABRT, bad_alloc, OOM) instead of
taking the test run down; the child reports what it saw as JSON."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from executorch.exir import to_edge_transform_and_lower
from forge import refresh_checksum, replace_blob
from models import MLP

import reference_backend
from backend_kit.header import Header, decode, encode, payload_of
from reference_backend.compile_specs import CompileSpec, memory_limit_spec, named_data_specs
from reference_backend.pte_blobs import delegate_blobs

#: Payload layout of blob format 1.4 (1.3's), the one written today (docs/blob-header.md): a 24-byte payload
#: header, the named-data and parameter headers (8 bytes each), then the value records. The
#: chain_pte fixture checks that its blob has this format.
BLOB_FORMAT = (1, 4)
VALUES_AT = 40
VALUE_RECORD = 48

CHILD = textwrap.dedent(
    """
    import json, os, resource, sys
    import reference_backend
    from executorch.runtime import Runtime
    reference_backend.load_runtime()
    args = json.loads(sys.argv[1])
    if args.get("max_memory"):
        reference_backend.set_max_memory_bytes(args["max_memory"])
    error = None
    try:
        program = Runtime.get().load_program(args["pte"], data_path=args.get("ptd"))
        program.load_method("forward")
    except RuntimeError as exc:
        error = str(exc)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("RESULT " + json.dumps({"error": error, "peak_mib": peak_kib // 1024,
                                  "max_memory": reference_backend.max_memory_bytes()}), flush=True)
    """
)


def load_in_child(pte: Path, ptd: Path | None = None, env: dict | None = None, max_memory: int | None = None):
    """(the child's JSON result, its stderr): the child must exit normally."""
    args = {"pte": str(pte), "ptd": str(ptd) if ptd else None, "max_memory": max_memory}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(args)],
        capture_output=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, f"the process died ({proc.returncode}): {err[-3000:]}"
    line = next(line for line in proc.stdout.decode().splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :]), err


def backend_lines(stderr: str) -> list[str]:
    return [
        line[line.index("ReferenceBackend:") :]
        for line in stderr.splitlines()
        if "] ReferenceBackend:" in line
    ]


def export(model, example, specs=()) -> bytes:
    edge = to_edge_transform_and_lower(
        torch.export.export(model, example), partitioner=[reference_backend.ReferencePartitioner(list(specs))]
    )
    return edge.to_executorch()


def edit_payload(pte: bytes, edit) -> bytes:
    """``pte`` with its blob's payload edited in place, checksum recomputed."""

    def apply(raw: bytearray) -> bytearray:
        start = decode(bytes(raw)).header_length
        payload = bytearray(raw[start:])
        edit(payload)
        raw[start:] = payload
        return refresh_checksum(raw)

    return replace_blob(pte, apply)


# --------------------------------------------------------------------------- log lines and keys


def test_a_key_with_a_byte_above_0x7f_is_refused_and_the_process_lives(tmp_path):
    torch.manual_seed(0)
    program = export(MLP().eval(), (torch.randn(4, 16),), named_data_specs(1024))
    pte = program.buffer
    (blob,) = delegate_blobs(pte)
    at = bytes(payload_of(blob.data)).find(b"fc1.weight@")  # the key in the payload's named-data table
    assert at > 0

    def edit(p: bytearray) -> None:
        p[at] = 0x80 | p[at]  # 'f' -> 0xe6: not UTF-8 on its own

    (tmp_path / "m.pte").write_bytes(edit_payload(pte, edit))
    result, err = load_in_child(tmp_path / "m.pte")
    assert "0x:23" in result["error"]  # InvalidProgram
    (line,) = backend_lines(err)
    assert "invalid blob" in line and "not printable ASCII" in line, line
    assert all(ord(c) < 0x80 for c in err if c != "\ufffd"), "a log line holds a non-ASCII byte"


def test_every_log_line_is_escaped_even_with_hostile_text_from_the_environment(tmp_path):
    """The runtime logs the environment's text for a bad memory maximum: bytes
    that are not UTF-8 there come out as \\xNN, and the process lives."""
    torch.manual_seed(0)
    (tmp_path / "m.pte").write_bytes(export(MLP().eval(), (torch.randn(4, 16),)).buffer)
    env = os.environb.copy()
    env[b"REFERENCE_BACKEND_MAX_MEMORY_BYTES"] = b"12\xff\xfeGiB"
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps({"pte": str(tmp_path / "m.pte")})],
        capture_output=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert b"REFERENCE_BACKEND_MAX_MEMORY_BYTES='12\\xff\\xfeGiB' is not a byte count" in proc.stderr
    assert b"\xff" not in proc.stderr
    result = json.loads(proc.stdout.decode().split("RESULT ", 1)[1])
    assert result["error"] is None and result["max_memory"] == 2 << 30  # the default, and the program loads


# --------------------------------------------------------------------------- memory limits


class Chain(torch.nn.Module):
    def forward(self, x):
        return torch.relu(torch.relu(x) + x)


def _blow_up_dims(payload: bytearray, dims=(16384, 16384)) -> int:
    """Rewrites every [4, 4] value to ``dims`` (shapes stay consistent); returns how many."""
    (num_values,) = struct.unpack_from("<I", payload, 0)
    n = 0
    for i in range(num_values):
        rec = VALUES_AT + VALUE_RECORD * i
        if payload[rec + 2] == 2 and struct.unpack_from("<2I", payload, rec + 4) == (4, 4):
            struct.pack_into("<2I", payload, rec + 4, *dims)
            n += 1
    return n


@pytest.fixture(scope="module")
def chain_pte() -> bytes:
    pte = export(Chain().eval(), (torch.randn(4, 4),)).buffer
    (blob,) = delegate_blobs(pte)
    assert tuple(decode(blob.data).blob_format) == BLOB_FORMAT, "the payload offsets here are format 1.4's"
    return pte


def test_the_header_records_the_memory_limit(chain_pte):
    (blob,) = delegate_blobs(chain_pte)
    h = decode(blob.data)
    assert h.header_format_version == 2
    # 4 float32 [4, 4] tensors (input, three results), each rounded up to 64 bytes.
    assert h.memory_limit == 4 * 64


def test_dimensions_rewritten_to_16384x16384_are_refused_before_allocating(tmp_path, chain_pte):
    forged = edit_payload(chain_pte, lambda p: _blow_up_dims(p) or pytest.fail("no [4, 4] value"))
    (tmp_path / "m.pte").write_bytes(forged)
    result, err = load_in_child(tmp_path / "m.pte")
    assert "0x:23" in result["error"], result
    (line,) = backend_lines(err)
    assert line == (
        "ReferenceBackend: invalid blob: the payload needs 3221225472 bytes of memory, more than the 256 "
        "bytes its header declares (the blob was altered)"
    )
    assert result["peak_mib"] < 2048, result  # nothing near the 3 GiB was allocated


@pytest.mark.full  # each starts processes that export and run: the full tier (CI) runs it
def test_a_forged_limit_is_still_bounded_by_the_applications_maximum(tmp_path, chain_pte):
    """The forger also raises the recorded limit: the application's maximum
    (default 2 GiB, here the environment's 1 GiB) refuses it."""

    def forge(raw: bytearray) -> bytes:
        h = decode(bytes(raw))
        payload = bytearray(raw[h.header_length :])
        _blow_up_dims(payload)
        return encode(
            Header(
                h.backend_id, h.blob_format, h.backend_version, h.executorch_version, memory_limit=1 << 40
            ),
            bytes(payload),
        )

    (blob,) = delegate_blobs(chain_pte)
    new = forge(bytearray(blob.data))
    assert len(new) == len(blob.data)  # same header size: the 8-byte limit stays a u64
    (tmp_path / "m.pte").write_bytes(replace_blob(chain_pte, lambda raw: new))
    for env, limit in (({}, 2 << 30), ({"REFERENCE_BACKEND_MAX_MEMORY_BYTES": str(1 << 30)}, 1 << 30)):
        result, err = load_in_child(tmp_path / "m.pte", env=env)
        assert "0x:21" in result["error"], result  # MemoryAllocationFailed
        (line,) = backend_lines(err)
        assert line == (
            f"ReferenceBackend: refusing a blob that needs 3221225472 bytes of memory, more than this application "
            f"allows ({limit} bytes; raise it with REFERENCE_BACKEND_MAX_MEMORY_BYTES or "
            "reference_backend_set_max_memory_bytes)"
        )
        assert result["peak_mib"] < 2048, result


@pytest.mark.full  # each starts processes that export and run: the full tier (CI) runs it
def test_the_application_maximum_refuses_a_genuine_blob_and_is_set_through_the_c_api(tmp_path):
    torch.manual_seed(0)
    (tmp_path / "m.pte").write_bytes(export(MLP().eval(), (torch.randn(4, 16),)).buffer)
    result, err = load_in_child(tmp_path / "m.pte", max_memory=1000)
    assert "0x:21" in result["error"] and result["max_memory"] == 1000
    assert "more than this application allows (1000 bytes" in backend_lines(err)[0]
    result, _ = load_in_child(tmp_path / "m.pte", max_memory=1 << 20)
    assert result["error"] is None


def test_the_max_memory_bytes_compile_spec_is_recorded_and_checked_at_export():
    torch.manual_seed(0)
    model, example = MLP().eval(), (torch.randn(4, 16),)
    (blob,) = delegate_blobs(export(model, example, [memory_limit_spec(1 << 20)]).buffer)
    assert decode(blob.data).memory_limit == 1 << 20
    with pytest.raises(Exception, match="more than the compile spec 'max_memory_bytes' allows"):
        export(model, example, [memory_limit_spec(100)])


def test_header_format_1_is_still_written_on_request_and_runs(tmp_path):
    torch.manual_seed(0)
    model, example = MLP().eval(), (torch.randn(4, 16),)
    pte = export(model, example, [CompileSpec("header_format", b"1")]).buffer
    (blob,) = delegate_blobs(pte)
    h = decode(blob.data)
    assert (h.header_format_version, h.header_length, h.memory_limit) == (1, 56, None)
    method = reference_backend.load_method(pte)
    torch.testing.assert_close(method.execute(list(example))[0], model(*example), rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------- named-data integrity


@pytest.mark.full  # each starts processes that export and run: the full tier (CI) runs it
def test_a_damaged_ptd_fails_its_checksum_with_the_key_and_the_file(tmp_path):
    torch.manual_seed(0)
    model = MLP().eval()
    program = export(model, (torch.randn(4, 16),), named_data_specs(1024, "weights"))
    program.write_tensor_data_to_file(str(tmp_path))
    (tmp_path / "m.pte").write_bytes(program.buffer)
    (blob,) = delegate_blobs(program.buffer)
    assert len(decode(blob.data).named_data_checksums) == 2
    ptd = tmp_path / "weights.ptd"
    data = bytearray(ptd.read_bytes())
    weight = model.fc2.weight.detach().numpy().tobytes()
    at = data.find(weight)
    assert at > 0
    data[at + 100] ^= 0x01  # one bit of one weight: same size, same keys
    (tmp_path / "damaged.ptd").write_bytes(data)
    result, err = load_in_child(tmp_path / "m.pte", tmp_path / "damaged.ptd")
    assert result["error"] is not None and "0x:24" in result["error"], result  # InvalidExternalData
    (line,) = backend_lines(err)
    assert "named data 'fc2.weight@" in line and "in 'weights.ptd' fails its checksum" in line, line
    result, _ = load_in_child(tmp_path / "m.pte", ptd)
    assert result["error"] is None
