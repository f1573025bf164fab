"""The ahead-of-time side of the contract: what a backend's ``preprocess()``
puts in front of its payload.

:class:`BlobWriter` holds what a backend knows about itself (its id, the blob
format it writes, its release) and asks the running ExecuTorch for the
exporter's version, so that ``preprocess()`` is one call::

    WRITER = BlobWriter("MyBackend", blob_format=(1, 0), version=__version__)
    return PreprocessResult(processed_bytes=WRITER.blob(payload))

Importing this module needs only the standard library and ``packaging``;
:meth:`BlobWriter.blob` imports ``executorch.version`` on its first call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from backend_kit.header import Header, HeaderError, encode, version_triple


def schema_name(target: object) -> str | None:
    """The schema name of an FX node's operator target ("aten::add.Tensor", "quantized_decomposed::
    quantize_per_tensor"), or None for a target that is not an operator overload (``operator.getitem``,
    a Python function, a string of a placeholder). The one rule of the kit, the suite and the
    reference backend for "which operator is this node"."""
    name = getattr(target, "name", None)
    if not callable(name):
        return None
    try:
        value = name()
    except TypeError:  # a name() that wants arguments is not an operator overload's
        return None
    return value if isinstance(value, str) else None


def exporting_executorch_version() -> tuple[int, int, int]:
    """(major, minor, patch) of the executorch package this process exports with."""
    from executorch.version import __version__

    return version_triple(__version__)


@dataclasses.dataclass(frozen=True)
class BlobWriter:
    """Writes the blobs of one backend: the contract header, then the payload.

    backend_id:   the id stored in the .pte (the BackendDetails subclass's name).
    blob_format:  (major, minor) of the payload format written.
    version:      the backend's release ("0.1.0", usually the package's
                  ``__version__``), written as its (major, minor, patch).
    """

    backend_id: str
    blob_format: tuple[int, int]
    version: str

    def __post_init__(self) -> None:
        version_triple(self.version)  # a release that cannot be written fails here, not at export
        major_minor = tuple(self.blob_format)
        if len(major_minor) != 2 or not all(isinstance(v, int) and 0 <= v <= 0xFFFF for v in major_minor):
            raise HeaderError(f"blob_format {self.blob_format!r} is not (major, minor) of two u16 numbers")

    def header(
        self, *, memory_limit: int | None = None, named_data_checksums: Sequence[int] | None = None
    ) -> Header:
        """The header of a blob written now, by this process's executorch."""
        major, minor = self.blob_format
        return Header(
            backend_id=self.backend_id,
            blob_format=(major, minor),
            backend_version=version_triple(self.version),
            executorch_version=exporting_executorch_version(),
            memory_limit=memory_limit,
            named_data_checksums=None if named_data_checksums is None else tuple(named_data_checksums),
        )

    def blob(
        self,
        payload: bytes | memoryview,
        *,
        memory_limit: int | None = None,
        named_data_checksums: Sequence[int] | None = None,
    ) -> bytes:
        """Header + ``payload``: what ``PreprocessResult.processed_bytes`` holds.

        ``memory_limit`` and ``named_data_checksums`` are the optional header
        extensions (docs/blob-header.md).
        """
        header = self.header(memory_limit=memory_limit, named_data_checksums=named_data_checksums)
        return encode(header, payload)
