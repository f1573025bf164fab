"""The single exception raised for malformed .pte data."""

from __future__ import annotations


class PteFormatError(ValueError):
    """A .pte file is malformed. ``offset`` is the byte offset of the problem.

    The message always names the offset, so it is useful on its own.
    """

    def __init__(self, message: str, offset: int) -> None:
        if f"offset {offset}" not in message:
            message = f"{message} (at offset {offset})"
        super().__init__(message)
        self.offset = offset
