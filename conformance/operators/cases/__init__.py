"""The case tables, one module per operator family. Each module has ``OPERATORS``: a tuple of
``conformance.operators.corpus.Operator``."""
