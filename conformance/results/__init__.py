"""A run's results as reports show them: the JSON Schema of report.json (``report_schema``), the result
tables defined once (``result_tables``) and drawn as terminal text and Markdown (``table_text``,
``summary_text``) or as one HTML page (``html_report``, and its command ``page_cli``), and the operator
cases as JUnit (``operator_junit``). It may import ``conformance.outcomes``, ``conformance.registry``,
``conformance.profiles``, ``conformance.report``, the result records of ``conformance.models`` and ``conformance.operators``, and
``conformance.certification`` (``page_cli`` reads a report through ``verify``); never
``conformance.run`` nor the vendor process. ``report_schema`` imports nothing of the suite:
``conformance.report`` uses it."""
