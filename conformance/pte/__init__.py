"""Executorch-free reading of ExecuTorch .pte files.

``read_pte(data_or_path) -> PteProgram`` parses a file into frozen dataclasses
and raises ``PteFormatError`` (with the byte offset) for malformed input.
``describe(program)`` renders a human-readable summary.
"""

from .describe import describe
from .errors import PteFormatError
from .model import (
    DataLocation,
    Delegate,
    ExecutionPlan,
    ExtendedHeader,
    NamedData,
    PteProgram,
    Segment,
    SubsegmentOffsets,
)
from .reader import read_pte

__all__ = [
    "DataLocation",
    "Delegate",
    "ExecutionPlan",
    "ExtendedHeader",
    "NamedData",
    "PteFormatError",
    "PteProgram",
    "Segment",
    "SubsegmentOffsets",
    "describe",
    "read_pte",
]
