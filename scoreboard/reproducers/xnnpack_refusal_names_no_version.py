"""XNNPACK delegate (executorch 1.5.1): a blob of a serialization format this runtime does not read is
refused with DelegateInvalidCompatibility (0x30), but the log line names neither the runtime's release
nor what to do.

Standalone (torch, executorch 1.5.1; no conformance-suite code):

    python xnnpack_refusal_names_no_version.py

What it does: lowers a small linear model to XNNPACK, changes the flatbuffer's file identifier of the
delegate blob from the format it was written in (XN01) to XN02, as a later serialization format would
write it, and loads the program in a fresh process, keeping what the runtime logged.

Seen: the load fails with 0x30 (right), and the runtime logs "XNNPACK Delegate Serialization Format
version identifier 'XN02' != expected XN00 or XN01'": the formats are named, but not the executorch
release the runtime belongs to, nor the fix (re-export with the executorch release of this runtime, or
run a newer runtime). A user who meets it in an application's log cannot tell which side to upgrade.
C-RT-5 of the contract asks for one line naming the blob's format, the runtime's own version, the
formats it reads and the fix.

Exit status: 1 while the refusal's log line does not name the runtime's executorch release, 0 once it
does (or 2 if the runtime does not refuse the blob with 0x30 at all).
"""

from __future__ import annotations

import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.version import __version__ as EXECUTORCH_VERSION

LOAD = """
import sys
import executorch.runtime as rt
try:
    rt.Runtime.get().load_program(open(sys.argv[1], "rb").read()).load_method("forward")
    print("LOADED")
except RuntimeError as exc:
    print("REFUSED", exc)
"""


class Linear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


def main() -> int:
    exported = torch.export.export(Linear().eval(), (torch.randn(2, 4),))
    pte = bytes(
        to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]).to_executorch().buffer
    )
    # The delegate blob is stored inline: find it by XNNPACK's header magic, then its flatbuffer's identifier
    # (4 bytes after the root offset, at the offset the header records at byte 10 of the blob).
    blob_at = pte.index(b"XH00") - 4
    (flatbuffer_at,) = struct.unpack_from("<I", pte, blob_at + 10)
    identifier_at = blob_at + flatbuffer_at + 4
    written = pte[identifier_at : identifier_at + 4]
    assert written in (b"XN00", b"XN01"), written
    forged = pte[:identifier_at] + b"XN02" + pte[identifier_at + 4 :]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "forged.pte"
        path.write_bytes(forged)
        done = subprocess.run([sys.executable, "-c", LOAD, str(path)], capture_output=True, text=True)
    print(f"written format {written.decode()}, forged XN02; the load: {done.stdout.strip()}")
    lines = [line for line in done.stderr.splitlines() if "XN02" in line]
    print("the runtime logged:", *lines, sep="\n  ")
    if "0x30" not in done.stdout.replace(":", ""):
        print("the runtime did not refuse the blob with 0x30")
        return 2
    if any(EXECUTORCH_VERSION.split("+")[0] in line for line in lines):
        print(f"the refusal names the runtime's release {EXECUTORCH_VERSION}")
        return 0
    print(f"no line about XN02 names the runtime's executorch release ({EXECUTORCH_VERSION}) or the fix")
    return 1


if __name__ == "__main__":
    sys.exit(main())
