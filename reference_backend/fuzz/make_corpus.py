"""Writes the seed corpus for the fuzzers: the blob-header test vectors and
the blobs of real exported programs (reference_backend/tests/models.py).

    .venv/bin/python reference_backend/fuzz/make_corpus.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def main() -> None:
    from exports import FORMAT_1_0, export
    from models import cases

    from reference_backend.pte_blobs import delegate_blobs

    out = HERE / "corpus"
    out.mkdir(exist_ok=True)
    vectors = json.loads((HERE.parents[1] / "kit" / "vectors" / "blob_headers.json").read_text())
    for vector in vectors:
        (out / f"vector-{vector['name']}").write_bytes(bytes.fromhex(vector["blob"]))
    for name in cases():
        for blob in delegate_blobs(export(name)):
            (out / f"{name}-{blob.index}").write_bytes(blob.data)
    for blob in delegate_blobs(export("mlp", FORMAT_1_0)):
        (out / f"mlp-format-1.0-{blob.index}").write_bytes(blob.data)
    # Blobs with a named-data table (data in the .pte, then in a .ptd), in format 1.2 and in the current one.
    for suffix, specs in (
        ("named-pte", (("named_data_threshold", b"0"),)),
        ("named-ptd", (("named_data_threshold", b"0"), ("named_data_file", b"weights"))),
    ):
        for blob in delegate_blobs(export("mlp", specs)):
            (out / f"mlp-{suffix}-{blob.index}").write_bytes(blob.data)
        for blob in delegate_blobs(export("mlp", (("blob_format", b"1.2"), *specs))):
            (out / f"mlp-format-1.2-{suffix}-{blob.index}").write_bytes(blob.data)
    # Format 1.3: int8 ops with parameter words (the conformance sample quant_net), dynamic dimensions.
    for name, pte in (("quant_net", _quantized_pte()), ("token_mlp-dynamic", _dynamic_pte())):
        for blob in delegate_blobs(pte):
            (out / f"{name}-{blob.index}").write_bytes(blob.data)
    print(f"{len(list(out.iterdir()))} seeds in {out}")


def _quantized_pte() -> bytes:
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from reference_backend import ReferencePartitioner
    from reference_backend.conformance import _quant_inputs, _QuantNet
    from reference_backend.quantizer import MinMaxObserver, ReferenceQuantizer

    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    inputs = _quant_inputs(generator)
    prepared = prepare_pt2e(
        torch.export.export(_QuantNet().eval(), inputs).module(), ReferenceQuantizer(MinMaxObserver)
    )
    prepared(*inputs)
    converted = convert_pt2e(prepared)
    edge = to_edge_transform_and_lower(
        torch.export.export(converted, inputs), partitioner=[ReferencePartitioner()]
    )
    return edge.to_executorch().buffer


def _dynamic_pte() -> bytes:
    import torch
    from executorch.exir import to_edge_transform_and_lower

    from reference_backend import ReferencePartitioner
    from reference_backend.conformance import _dynamic_shapes, _TokenMLP

    torch.manual_seed(0)
    exported = torch.export.export(
        _TokenMLP().eval(), (torch.randn(2, 3, 16),), dynamic_shapes=_dynamic_shapes()
    )
    return to_edge_transform_and_lower(exported, partitioner=[ReferencePartitioner()]).to_executorch().buffer


if __name__ == "__main__":
    main()
