"""The model tier (``run --models``, report-only): small versions of standard architectures written
for the suite (``architectures``), the vendor-process task that lowers one (``tasks``) and the
parent side that runs it and makes its row of the report's ``models`` section (``runner``)."""
