"""Captures the runtime's log: what native code writes to file descriptor 2
and what is written to Python's ``sys.stderr``. Both are needed: the
ExecuTorch Python extension routes the C++ log through ``sys.stderr`` (so a
test runner that replaces ``sys.stderr`` would otherwise take it), while a
plain C++ program writes to the descriptor."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile


@contextlib.contextmanager
def capture_stderr():
    """Within the block, stderr at both levels goes to a temporary file; on
    exit the list yielded holds the captured text (one item)."""
    captured: list[str] = []
    sys.stderr.flush()
    saved_fd = os.dup(2)
    saved_stream = sys.stderr
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        sys.stderr = io.TextIOWrapper(os.fdopen(os.dup(sink.fileno()), "wb"), write_through=True)
        try:
            yield captured
        finally:
            sys.stderr.flush()
            sys.stderr.close()
            sys.stderr = saved_stream
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
            sink.seek(0)
            captured.append(sink.read().decode("utf-8", "replace"))
