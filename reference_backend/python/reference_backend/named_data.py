"""The named data that preprocess hands to ExecuTorch (``PreprocessResult.data_store_output``).

ExecuTorch's builder for it, ``NamedDataStore``, lives only in the private module
``executorch.exir._serialize._named_data_store`` (as does ``DataEntry``, in
``executorch.exir._serialize.data_serializer``). A conformant vendor package
imports no private module (contract clause C-PKG-2), so this module builds the
result from public names only:

* ``NamedDataStoreOutput`` is re-exported by the public module
  ``executorch.exir.backend.backend_details`` (it is the declared type of
  ``PreprocessResult.data_store_output``), and it is a plain dataclass;
* its entries' class ``DataEntry`` is taken from the declared field types of
  that dataclass (``typing.get_type_hints``), not imported by path;
* ``TensorLayout`` comes from the public ``executorch.exir.tensor_layout``.

When ExecuTorch gives ``NamedDataStore`` a public path, replace this module's
body with it; nothing else in the package depends on how the output is built.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence

import torch
from executorch.exir.backend.backend_details import NamedDataStoreOutput

from reference_backend.serialize import NamedEntry

#: Alignment of each named blob in the .pte or .ptd: enough for any SIMD load,
#: and the runtime reads the weights in place (no copy).
ALIGNMENT = 64


def _data_entry_class() -> type:
    """``DataEntry``, as declared by NamedDataStoreOutput.pte_data: Dict[str, DataEntry]."""
    hints = typing.get_type_hints(NamedDataStoreOutput)
    return typing.get_args(hints["pte_data"])[1]


#: Bytes of a buffer's start that, with its length, pick the buffers it may equal.
_PREFIX = 64


class _Buffers:
    """The distinct buffers of the named data, in order: equal data is stored once.

    Equal lengths and starts pick the candidates, and only those are compared whole: a dict keyed by the
    bytes themselves would hash every byte of every buffer (4.25 GiB at NDATA-5: seconds of the lowering)."""

    def __init__(self) -> None:
        self.buffers: list[bytes] = []
        self._candidates: dict[tuple[int, bytes], list[int]] = {}

    def index(self, raw: bytes) -> int:
        same_start = self._candidates.setdefault((len(raw), raw[:_PREFIX]), [])
        for i in same_start:
            if self.buffers[i] == raw:
                return i
        same_start.append(len(self.buffers))
        self.buffers.append(raw)
        return len(self.buffers) - 1


def data_store_output(
    named: Sequence[tuple[NamedEntry, torch.Tensor, bytes]], file_tag: str | None
) -> NamedDataStoreOutput | None:
    """The named data of one blob: every entry in the .pte (``file_tag`` None),
    or in the external file ExecuTorch writes as ``file_tag``.ptd."""
    if not named:
        return None
    # Imported here: executorch.exir.tensor_layout appeared in 1.1, and the AOT
    # side without named data still runs on 1.0.1 (matrix/).
    from executorch.exir.tensor_layout import TensorLayout

    data_entry = _data_entry_class()
    buffers = _Buffers()
    entries = {}
    for entry, tensor, raw in named:
        entries[entry.key] = data_entry(
            buffer_index=buffers.index(raw),
            alignment=ALIGNMENT,
            tensor_layout=TensorLayout.from_tensor(tensor),
        )
    if file_tag is None:
        return NamedDataStoreOutput(buffers=buffers.buffers, pte_data=entries, external_data={})
    return NamedDataStoreOutput(buffers=buffers.buffers, pte_data={}, external_data={file_tag: entries})
