"""``--target ssh://[user@]host[:port][/workspace]``: the target is reached
with the OpenSSH client, one master connection per run (ControlMaster) so that
each command costs a round trip and not a handshake.

Authentication is the user's: keys, an agent, ~/.ssh/config. ssh runs with
BatchMode (never a password prompt, which would hang the run), a connect
timeout and keep-alives (a lost connection ends the command instead of
hanging it). ``EXECUTORCH_CONFORMANCE_SSH_OPTIONS`` adds options to every ssh
command line (e.g. ``-F my_config`` or ``-i key``).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile
from pathlib import Path

from conformance.targets.transport import (
    COPY_FAILED,
    Completed,
    TargetError,
    Transport,
    last_line,
    quote,
    tar_bytes,
    untar_bytes,
)

OPTIONS_ENV = "EXECUTORCH_CONFORMANCE_SSH_OPTIONS"
DEFAULT_WORKSPACE = "/tmp/executorch-conformance"  # noqa: S108  on the target; ssh://host/DIR moves it
#: ssh's own exit status for a failure of the connection (the remote command's status otherwise).
SSH_FAILED = 255


class SshTransport(Transport):
    scheme = "ssh"

    def __init__(
        self, url: str, host: str, user: str | None, port: int | None, workspace: str | None
    ) -> None:
        super().__init__(url, workspace or DEFAULT_WORKSPACE)
        self.destination = f"{user}@{host}" if user else host
        self.port = port
        self._control = tempfile.mkdtemp(prefix="etc-ssh-")  # short: a socket path has ~100 bytes
        try:
            self.extra = shlex.split(os.environ.get(OPTIONS_ENV, ""))
        except ValueError as exc:
            raise TargetError(f"{OPTIONS_ENV} is not a valid option list ({exc})") from None

    def _base(self) -> list[str]:
        argv = [
            "ssh",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=3",
            "-o",
            "ControlMaster=auto",
            "-o",
            f"ControlPath={self._control}/%C",
            "-o",
            "ControlPersist=300",
            *self.extra,
        ]
        if self.port:
            argv += ["-p", str(self.port)]
        return argv + [self.destination]

    def _argv(self, command: str) -> list[str]:
        return [*self._base(), command]

    def lost(self, done: Completed) -> str | None:
        return last_line(done.stderr) if done.status == SSH_FAILED else None

    def put(self, local: Path, remote: str, timeout: float) -> None:
        what = f"copying {local.name} to {remote}"
        done = self.run(
            f"mkdir -p {quote(remote)} && tar -xf - -C {quote(remote)}", timeout, what, input=tar_bytes(local)
        )
        self.check(done, what)

    def get(self, remote: str, local: Path, timeout: float) -> None:
        what = f"copying {remote} back"
        done = self.check(self.run(f"tar -cf - -C {quote(remote)} .", timeout, what), what)
        untar_bytes(done.data, local)

    one_trip = True

    def exchange(
        self, local: Path, remote: str, first: str, command: str, timeout: float, what: str
    ) -> Completed:
        """One ssh command: runs ``first`` (freeing space), unpacks the bundle ``local`` (a tar stream on stdin)
        into ``remote``, runs ``command`` there, and gives ``remote``/results back as a tar stream (``data``); exit
        status COPY_FAILED if the bundle could not be unpacked (tar's message on stderr), the command's own if it
        exits."""
        script = (
            f"{first}mkdir -p {quote(remote)} && tar -xf - -C {quote(remote)} || exit {COPY_FAILED}; "
            f"{{ {command} ; }} > /dev/null; tar -cf - -C {quote(remote + '/results')} ."
        )
        return self.run(script, timeout, what, input=tar_bytes(local))

    def disconnect(self) -> None:
        """Stops the master connection this transport started (the next command connects again)."""
        import subprocess

        if Path(self._control).is_dir() and any(Path(self._control).iterdir()):
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run(
                    [*self._base()[:-1], "-O", "exit", self.destination], capture_output=True, timeout=10
                )

    def close(self) -> None:
        """Stops the master connection and removes its socket directory."""
        import shutil

        self.disconnect()
        shutil.rmtree(self._control, ignore_errors=True)
