"""The JSON Schemas of the suite's files (``report.schema.json``: report.json), shipped with the
package; ``conformance.results.report_schema`` validates against it."""
