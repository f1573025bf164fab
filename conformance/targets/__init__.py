"""Targets: where the runtime checks run when not in this host's Python.

``open_transport(url)`` parses a ``--target`` value (``local``,
``ssh://[user@]host[:port][/workspace]``, ``adb[://serial][/workspace]``,
``qemu-<arch>[:///workspace]``) and returns its transport; ``conformance.targets.runtime.TargetRuntime`` serves the
runtime tasks through the C++ runner there (docs/device-runner.md).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from conformance.targets.transport import TargetError, Transport

USAGE = (
    "give local, ssh://[user@]host[:port][/workspace], adb[://serial][/workspace] "
    "or qemu-<arch>[:///workspace]"
)

__all__ = ["TargetError", "Transport", "open_transport"]


def open_transport(url: str) -> Transport:
    """The transport of a target URL; TargetError naming what is wrong with it."""
    text = url.strip()
    if text == "local":
        from conformance.targets.local import LocalTransport

        return LocalTransport()
    if text == "adb" or text.startswith("adb://"):
        from conformance.targets.adb import AdbTransport

        parts = urlsplit(text) if text != "adb" else None
        serial = (parts.netloc or None) if parts else None
        return AdbTransport(text, serial, _workspace(parts.path) if parts else None)
    if text.startswith("qemu-"):
        from conformance.targets.qemu import QemuTransport, parse

        machine, workspace = parse(text)
        return QemuTransport(text, machine, workspace)
    if text.startswith("ssh://"):
        from conformance.targets.ssh import SshTransport

        parts = urlsplit(text)
        try:
            port = parts.port
        except ValueError:
            raise TargetError(
                f"--target {url!r}: the port is not a number from 1 to 65535; {USAGE}"
            ) from None
        if not parts.hostname:
            raise TargetError(f"--target {url!r} names no host; {USAGE}")
        if parts.password is not None:
            raise TargetError(f"--target {url!r}: give no password in the URL; ssh uses keys (BatchMode)")
        return SshTransport(text, parts.hostname, parts.username, port, _workspace(parts.path))
    raise TargetError(f"--target {url!r} is not a target; {USAGE}")


def _workspace(path: str) -> str | None:
    return path.rstrip("/") or None
