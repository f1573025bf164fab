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


@contextlib.contextmanager
def output_to(path):
    """Within the block, what is written to stdout and stderr (both file descriptors and the Python
    streams) is appended to the file ``path`` instead of the terminal."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    saved_streams = sys.stdout, sys.stderr
    with open(path, "ab") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        stream = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True, errors="replace")
        sys.stdout = sys.stderr = stream
        try:
            yield
        finally:
            stream.flush()
            sys.stdout, sys.stderr = saved_streams
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
