"""Deprecated since suite 0.6.0, an error from 0.7.0: the output comparison is ``conformance.comparison``
(docs/contract.md named ``conformance.probes.assert_outputs_close`` up to 0.5). A name read from here
warns and is the comparison's own."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    import importlib
    import warnings

    deprecations = importlib.import_module("conformance.deprecations")
    comparison = importlib.import_module("conformance.comparison")
    if name.startswith("__") or not hasattr(comparison, name):
        raise AttributeError(f"module 'conformance.probes' has no attribute {name!r}")
    message = deprecations.notice("probes-module", f"conformance.probes.{name}")
    if deprecations.is_error("probes-module"):
        raise AttributeError(message)
    warnings.warn(message, deprecations.SuiteDeprecationWarning, stacklevel=2)
    return getattr(comparison, name)
