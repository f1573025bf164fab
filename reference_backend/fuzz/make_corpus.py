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
    # Format 1.2 blobs with a named-data table (data in the .pte, then in a .ptd).
    for suffix, specs in (("named-pte", (("named_data_threshold", b"0"),)),
                          ("named-ptd", (("named_data_threshold", b"0"), ("named_data_file", b"weights")))):
        for blob in delegate_blobs(export("mlp", specs)):
            (out / f"mlp-{suffix}-{blob.index}").write_bytes(blob.data)
    print(f"{len(list(out.iterdir()))} seeds in {out}")


if __name__ == "__main__":
    main()
