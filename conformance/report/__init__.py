"""The JSON report of a run (schema: docs/report-schema.md), one concern per module:

- ``rows``: the result row (``ResultRow``, a ``TypedDict``), the one type of ``results[]`` in memory, and
  the profile row (``ProfileRow``) of ``profiles[]``;
- ``records``: the report typed (``Report`` and its sections), read back with ``Report.from_dict``
  (``ReportTypeError`` lists each field of the wrong shape);
- ``verdicts``: the verdict its results give (``verdict``), and each profile's (``profile_verdicts``);
- ``sealing``: its content hash (``seal``, ``content_hash``) and the SHA-256 of the files it names;
- ``building``: the report of a run (``build_report``) and its file (``write_report``);
- ``schema``: the JSON Schema of report.json (conformance/schemas/report.schema.json) as the reader checks it.

Reading and writing again gives the same bytes. The names below are imported from here
(docs/api-stability.md); the modules are where each is defined.
"""

from __future__ import annotations

from conformance.report.building import build_report, runtime_libraries, write_report
from conformance.report.records import (
    MODES,
    SCHEMA,
    Backend,
    OperatorRow,
    Options,
    Report,
    ReportTypeError,
    Result,
    RuntimeLibrary,
    json_fields,
    type_problems,
)
from conformance.report.rows import CarriedOver, ProfileRow, ResultRow
from conformance.report.sealing import (
    MAX_HASH_BYTES,
    canonical_bytes,
    content_hash,
    file_sha256,
    json_numbers,
    seal,
)
from conformance.report.verdicts import SIMULATED_ONLY_REASON, profile_verdicts, summarize, verdict

__all__ = [
    "MAX_HASH_BYTES",
    "MODES",
    "SCHEMA",
    "SIMULATED_ONLY_REASON",
    "Backend",
    "CarriedOver",
    "OperatorRow",
    "Options",
    "ProfileRow",
    "Report",
    "ReportTypeError",
    "Result",
    "ResultRow",
    "RuntimeLibrary",
    "build_report",
    "canonical_bytes",
    "content_hash",
    "file_sha256",
    "json_fields",
    "json_numbers",
    "profile_verdicts",
    "runtime_libraries",
    "seal",
    "summarize",
    "type_problems",
    "verdict",
    "write_report",
]
