"""The values of a model row's ``result`` (the report's ``models`` section, docs/models.md).

Kept apart from ``runner`` so that what only shows a report (the tables, the HTML page) reads them
without importing the run's machinery.
"""

from __future__ import annotations

MATCHED, MISMATCH, NOT_DELEGATED = "matched", "mismatch", "not_delegated"
LOWERING_FAILED, RUN_FAILED, NOT_RUN, ERROR = "lowering_failed", "run_failed", "not_run", "error"
RESULTS = (MATCHED, MISMATCH, NOT_DELEGATED, LOWERING_FAILED, RUN_FAILED, NOT_RUN, ERROR)
