"""A vendor descriptor module that raises while being imported."""

raise RuntimeError("the vendor module fails on import")
