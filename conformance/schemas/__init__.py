"""The JSON Schemas of the suite's files (``report.schema.json``: report.json), shipped with the
package; ``conformance.report.schema`` validates against it."""
