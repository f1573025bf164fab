"""A real OpenSSH server for the ssh target's tests: started on 127.0.0.1 on a
free port with key authentication (keys made here) in a temporary directory,
stopped by its pid at the end."""

from __future__ import annotations

import dataclasses
import getpass
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

SSHD = next((p for p in ("/usr/sbin/sshd", shutil.which("sshd") or "") if p and os.path.exists(p)), None)


@dataclasses.dataclass
class Sshd:
    process: subprocess.Popen
    port: int
    user: str
    #: an ssh_config file naming the key and the port (for EXECUTORCH_CONFORMANCE_SSH_OPTIONS="-F ...")
    client_config: Path
    log: Path
    log_file: Any = None

    @property
    def url(self) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Stops this sshd by its pid (its sessions end with their connections)."""
        if self.log_file is not None:
            self.log_file.close()
            self.log_file = None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def unavailable() -> str | None:
    """Why no sshd can be started here, or None."""
    if SSHD is None:
        return "sshd is not installed (apt-get install -y openssh-server; .ci/run does it on CI)"
    if shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        return "the OpenSSH client (ssh, ssh-keygen) is not installed"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(root: Path) -> Sshd:
    """Starts sshd for the current user; raises RuntimeError with sshd's log if it does not listen."""
    root.mkdir(parents=True, exist_ok=True)
    for key in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(root / key)], check=True)
    (root / "authorized_keys").write_text((root / "client_key.pub").read_text())
    os.chmod(root / "authorized_keys", 0o600)
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    port = _free_port()
    config = root / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {root / 'host_key'}",
                f"AuthorizedKeysFile {root / 'authorized_keys'}",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",
                "PermitRootLogin prohibit-password",
                f"PidFile {root / 'sshd.pid'}",
                "MaxStartups 50",
                "MaxSessions 50",
                "",
            ]
        )
    )
    log = root / "sshd.log"
    log_file = open(log, "wb")  # noqa: SIM115  sshd writes to it until stop() closes it
    process = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=log_file
    )
    client = root / "ssh_config"
    client.write_text(
        "\n".join(
            [
                "Host 127.0.0.1",
                f"  Port {port}",
                f"  IdentityFile {root / 'client_key'}",
                "  IdentitiesOnly yes",
                "  StrictHostKeyChecking no",
                "  UserKnownHostsFile /dev/null",
                "  LogLevel ERROR",
                "",
            ]
        )
    )
    server = Sshd(process, port, getpass.getuser(), client, log, log_file)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"sshd did not listen on 127.0.0.1:{port}: {log.read_text(errors='replace')[-2000:]}")
