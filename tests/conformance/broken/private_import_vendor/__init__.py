"""A vendor package that reaches into a private ExecuTorch module."""

from executorch.exir._serialize import _program  # noqa: F401

from reference_backend import ReferencePartitioner  # noqa: F401
