"""The conformance suite as pytest tests: ``pytest --pyargs conformance.suite --et-backend NAME``."""
