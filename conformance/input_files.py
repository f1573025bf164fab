"""The one place every command checks a path it reads: a regular file, or refused at once.

A FIFO nobody writes to blocks an ``open`` for reading forever, a device such as ``/dev/zero`` never
ends, a directory is no file: each is refused before it is read, with a message naming what the path is
(docs/certification.md, "Bad input"). ``check_input_file`` only stats the path (it never opens it);
``open_regular`` opens without blocking and checks the open descriptor, so a path swapped for a FIFO
between the check and the read is still refused.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from conformance.byte_sizes import byte_size


class NotARegularFile(OSError):
    """A path a command reads is a FIFO, a device, a socket or a directory; the message names which."""


def kind_of(mode: int) -> str:
    """'a directory', 'a FIFO', 'a character device', ... for a ``st_mode`` that is not a regular file."""
    for test, what in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def check_input_file(path: str | os.PathLike[str], give: str = "") -> Path:
    """``path`` if it is a regular file (after symlinks); NotARegularFile naming what it is otherwise
    (``give``: what to give instead, appended as "; give ..."). FileNotFoundError if it does not exist.
    Never opens the path."""
    p = Path(path)
    mode = os.stat(p).st_mode  # FileNotFoundError / PermissionError as they are
    if not stat.S_ISREG(mode):
        raise NotARegularFile(
            f"{p} is {kind_of(mode)}, not a regular file" + (f"; give {give}" if give else "")
        )
    return p


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading, only if it is a regular file (after symlinks): never blocks on a FIFO,
    never reads a device. Raises NotARegularFile (an OSError) naming what it is instead."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(f"{path} is {kind_of(mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


class FileTooLarge(OSError):
    """A file is longer than the command that reads it reads: ``size`` (its bytes, or None when only the
    bounded read found out) and ``limit``."""

    def __init__(self, path: str | os.PathLike[str], size: int | None, limit: int) -> None:
        told = f"is {byte_size(size)}" if size is not None else "holds"
        super().__init__(f"{path} {told}, more than the {byte_size(limit)} read; not read")
        self.size, self.limit = size, limit


def read_bounded(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of the regular file ``path`` (``open_regular``) if it holds at most ``max_bytes``;
    FileTooLarge otherwise: its size is checked before reading, and the read stops one byte past the
    limit (a file that grows while it is read has no size worth trusting). Every command that reads a
    user's file reads it here."""
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise FileTooLarge(path, size, max_bytes)
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLarge(path, None, max_bytes)
    return data
