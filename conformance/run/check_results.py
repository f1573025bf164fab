"""The results a run collects from its tests' reports, one owner for each: a result per check (the
report's ``results``), the rows of the OPS checks (``operators``), the model tier's rows (``models``), where
the runtime checks ran (``target``), the vendor's simulator (``simulator``) and the lowerings taken from
the lowering cache. The plugin feeds it every ``TestReport`` (``record``) and asks for the complete list
of results when the run ends (``complete``): a selected check that never reported is ``not_run``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.outcomes import NOT_RUN, OUTCOMES, PASSED
from conformance.registry import Check
from conformance.report import ResultRow
from conformance.run.check_reports import check_id_of, outcome_of, reason_of, summed_seconds


class CheckResults:
    """What the tests of one run reported (on the controller: xdist sends every worker's reports there)."""

    def __init__(self, checks: dict[str, Check], models: tuple[str, ...] | None) -> None:
        self.checks = checks
        #: the models the run selected (None: no model tier)
        self.models = models
        #: check id -> its result row (the report's ``results[]``)
        self.results: dict[str, ResultRow] = {}
        #: (operator, dtype) -> its row of the report's ``operators`` section
        self.operators: dict[tuple[str, str], dict[str, Any]] = {}
        #: model name -> its row of the report's models section, as the model tests report them
        self.model_rows: dict[str, dict[str, Any]] = {}
        #: where the runtime checks ran (--target), as the first check that ran there recorded it
        self.target: dict[str, Any] | None = None
        #: the vendor's simulator that computed the backend's delegates (docs/contract.md, "Simulated runtimes")
        self.simulator: dict[str, Any] | None = None
        #: test node id -> the lowerings its check took from the lowering cache (from any xdist worker)
        self.cached_lowerings: dict[str, int] = {}

    def record(self, report: pytest.TestReport) -> None:
        """Takes what one phase of one test reported."""
        hits = sum(int(str(v)) for k, v in report.user_properties if k == "cached_lowerings")
        if hits:  # each phase's report carries the item's properties so far: the last one counts
            self.cached_lowerings[report.nodeid] = hits
        if "test_model[" in report.nodeid:
            self._record_model(report)
            return
        check_id = dict(report.user_properties).get("check_id") or check_id_of(report.nodeid)
        if check_id not in self.checks:
            return
        status = outcome_of(report)
        if status is None:
            return
        outcome, reason = status
        self._record_sections(report)
        previous = self.results.get(check_id)
        if previous and previous["outcome"] != PASSED and outcome == PASSED:
            return  # a teardown pass does not undo a failed call
        seconds = summed_seconds(report.user_properties)
        shared = seconds.pop("shared_s", 0.0)
        simulated = any(k == "simulated" for k, _ in report.user_properties) or bool(
            previous and previous.get("simulated")
        )
        # where the vendor process's time went (conformance/vendor/step_times.py), each key written by name so
        # that mypy holds it to ResultRow (a test checks that these are every kind of step time)
        row = self.result(check_id, outcome, reason, report.duration, shared)
        row["init_s"] = round(seconds["init_s"], 3)
        row["execute_s"] = round(seconds["execute_s"], 3)
        row["lowering_s"] = round(seconds["lowering_s"], 3)
        if simulated:
            row["simulated"] = True
        self.results[check_id] = row

    def result(
        self, check_id: str, outcome: str, reason: str, duration: float, shared: float = 0.0
    ) -> ResultRow:
        """The result row of check ``check_id``."""
        assert outcome in OUTCOMES, outcome
        c = self.checks[check_id]
        return {
            "id": c.id,
            "clause": c.clause,
            "level": c.level,
            "title": c.title,
            "applies_if": c.applies_if,
            "outcome": outcome,
            "reason": reason,
            "duration_s": round(duration, 3),
            # of duration_s, the shared setup (lowerings, samples, runtime loads) later checks reuse
            "shared_s": round(min(shared, duration), 3),
        }

    def _record_model(self, report: pytest.TestReport) -> None:
        """The row a model test recorded; a model test that failed without one (a defect of the suite) is an
        ``error`` row with pytest's reason."""
        name = check_id_of(report.nodeid) or ""
        recorded = dict(report.user_properties).get("model")
        if recorded is not None:
            self.model_rows[name] = json.loads(str(recorded))
        elif report.failed and name in (self.models or ()) and name not in self.model_rows:
            from conformance.models.architectures import MODELS
            from conformance.models.results import ERROR
            from conformance.models.runner import new_row

            self.model_rows[name] = {**new_row(MODELS[name]), "result": ERROR, "reason": reason_of(report)}

    def _record_sections(self, report: pytest.TestReport) -> None:
        """The target, the simulator, and the per-operator rows an OPS check recorded (the one that ran more
        cases wins)."""
        for key, value in report.user_properties:
            if key == "target" and self.target is None:
                self.target = json.loads(str(value))
            if key == "simulator" and self.simulator is None:
                self.simulator = json.loads(str(value))
            if key != "operators":
                continue
            for row in json.loads(str(value)):  # recorded with json.dumps
                old = self.operators.get((row["op"], row["dtype"]))
                if old is None or row["ran"] >= old["ran"]:
                    self.operators[(row["op"], row["dtype"])] = {**(old or {}), **row}

    def model_section(self) -> list[dict[str, Any]] | None:
        """The rows of the selected models in the tier's order (None without a model tier)."""
        if self.models is None:
            return None
        return [self.model_rows[m] for m in self.models if m in self.model_rows]

    def complete(self, expected_ids: list[str], interrupted: bool) -> list[ResultRow]:
        """A result for every selected check, in the suite's order; the missing ones are not_run."""
        why = (
            "the run was interrupted before this check reported"
            if interrupted
            else "no result was reported for this check (its test process was lost)"
        )
        return [self.results.get(i) or self.result(i, NOT_RUN, why, 0.0) for i in expected_ids]
