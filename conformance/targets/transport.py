"""What every transport to a target does: copy a directory there, run a shell
command line there, copy a directory back, each bounded by a timeout.

A transport never hangs and never lets a tool's traceback out: whatever goes
wrong is a ``TargetError`` whose message names the target, what was being
done and what the tool said ("lost the connection to ssh://host: ...",
"the target's disk is full while copying ... to ..."). Remote paths are POSIX
paths on the target; command lines run under the target's ``sh``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import signal
import subprocess
from pathlib import Path


class TargetError(Exception):
    """The target cannot be used for what was asked; the message says what failed and how to fix it."""


class TargetTimeout(TargetError):
    """The tool did not finish within its timeout (the target hangs or the connection is lost); it was killed."""


@dataclasses.dataclass(frozen=True)
class Completed:
    """A command line that ran on the target: its exit status and what it printed."""

    status: int
    stdout: str
    stderr: str
    #: stdout as bytes (a tar stream)
    data: bytes = b""


#: The exit status of a one-trip exchange (``SshTransport.exchange``) whose copy of the bundle failed.
COPY_FAILED = 91

#: What tools print when the target's file system is full.
DISK_FULL = ("No space left on device", "ENOSPC", "Disk quota exceeded")


def disk_full(text: str) -> bool:
    return any(marker in text for marker in DISK_FULL)


def disk_full_line(text: str) -> str:
    """The first line of ``text`` that says the disk is full (the tool's last line often says less)."""
    return next((line.strip() for line in text.splitlines() if disk_full(line)), last_line(text))


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def quote(path: str) -> str:
    return shlex.quote(path)


class Transport:
    """A target reached by one tool (a subprocess, ssh, adb). Subclasses implement ``_argv`` (how a command
    line is run there), ``put`` and ``get``."""

    #: the kind in a target URL: local, ssh, adb, qemu
    scheme = ""
    #: the machine every program runs as there, when the transport knows it without asking (an emulator's);
    #: None: ``uname -m`` there says
    machine: str | None = None

    def __init__(self, url: str, workspace: str) -> None:
        self.url = url
        #: the directory on the target below which the suite writes
        self.workspace = workspace

    # ----------------------------------------------------------------- to implement

    def _argv(self, command: str) -> list[str]:
        """The host argv that runs the shell command line ``command`` on the target."""
        raise NotImplementedError

    def put(self, local: Path, remote: str, timeout: float) -> None:
        """Copies the files below ``local`` into ``remote`` on the target (created)."""
        raise NotImplementedError

    def get(self, remote: str, local: Path, timeout: float) -> None:
        """Copies the files below ``remote`` on the target into ``local`` (created)."""
        raise NotImplementedError

    #: whether ``exchange`` runs a bundle in one round trip (ssh); otherwise put, run and get are separate
    one_trip = False

    def exchange(
        self, local: Path, remote: str, first: str, command: str, timeout: float, what: str
    ) -> Completed:
        """The bundle in, ``command`` run, the results out, in one round trip (only when ``one_trip``)."""
        raise NotImplementedError

    def close(self) -> None:
        """Releases what the transport holds (a master connection)."""

    def launch(self, binary: str) -> str:
        """The shell words that start the program ``binary`` there (an emulator puts itself before it)."""
        return quote(binary)

    def details(self) -> dict[str, str]:
        """What the report's target section adds about this transport (an emulator's version)."""
        return {}

    def lost(self, done: Completed) -> str | None:
        """The tool's message if ``done`` failed because the target could not be reached, else None."""
        return None

    # ----------------------------------------------------------------- shared

    def run(self, command: str, timeout: float, what: str, input: bytes | None = None) -> Completed:
        """Runs ``command`` on the target; a ``TargetError`` if the tool fails to reach it or overruns."""
        return self._tool(self._argv(command), timeout, what, input)

    def _tool(self, argv: list[str], timeout: float, what: str, input: bytes | None = None) -> Completed:
        """Runs a host tool (ssh, adb, sh) in its own process group, killed as a whole on timeout."""
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise TargetError(
                f"{argv[0]} is not installed on this host; it is needed to reach {self.url}"
            ) from None
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise TargetTimeout(
                f"{self.url} did not answer within {timeout:.3g} s while {what} "
                "(the connection is lost or the target hangs)"
            ) from None
        return Completed(proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), out)

    def check(self, done: Completed, what: str) -> Completed:
        """``done`` if it succeeded, else a TargetError naming the cause (a full disk, the tool's message)."""
        if done.status == 0:
            return done
        text = done.stderr + done.stdout
        lost = self.lost(done)
        if lost:
            raise TargetError(f"lost the connection to {self.url} while {what}: {lost}")
        if disk_full(text):
            raise TargetError(f"the disk of {self.url} is full while {what}: {disk_full_line(text)}")
        raise TargetError(f"{what} on {self.url} failed (exit status {done.status}): {last_line(text)}")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=5)


def tar_bytes(local: Path) -> bytes:
    """The files below ``local`` as an uncompressed tar stream (for tools that pipe one)."""
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(local.rglob("*")):
            tar.add(path, arcname=str(path.relative_to(local)), recursive=False)
    return buffer.getvalue()


def untar_bytes(data: bytes, local: Path) -> None:
    """Extracts a tar stream into ``local`` (plain files and directories only)."""
    import io
    import tarfile

    local.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        tar.extractall(local, filter="data")
