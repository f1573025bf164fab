"""A run's results as reports show them: the result tables defined once (``result_tables``) and drawn as
terminal text and Markdown (``table_text``, ``summary_text``) or as one HTML page (``html_report``, and its
command ``page_cli``), the operator cases as JUnit (``operator_junit``), and the files written beside a
report (``artifacts``). It may import ``conformance.outcomes``, ``conformance.registry``,
``conformance.profiles``, ``conformance.report``, the result records of ``conformance.models`` and
``conformance.operators``, and ``conformance.certification`` (``page_cli`` reads a report through
``verify``); never ``conformance.run`` nor the vendor process (tests/layering/test_layer_rules.py).
The JSON Schema of report.json is the report's own (``conformance.report.schema``)."""
