"""``--target adb[://serial][/workspace]``: an Android device (or any adbd)
reached with ``adb``: ``adb [-s SERIAL] push`` to copy files there, ``adb
[-s SERIAL] shell`` to run a command line, ``adb [-s SERIAL] pull`` to copy
results back. Without a serial, adb picks the only device attached."""

from __future__ import annotations

from pathlib import Path

from conformance.targets.transport import Completed, Transport, last_line, quote

DEFAULT_WORKSPACE = "/data/local/tmp/executorch-conformance"
#: adb's messages when the device is not there (any more).
LOST = (
    "no devices",
    "device offline",
    "not found",
    "device unauthorized",
    "closed",
    "protocol fault",
    "cannot connect",
    "failed to connect",
)


class AdbTransport(Transport):
    scheme = "adb"

    def __init__(self, url: str, serial: str | None, workspace: str | None) -> None:
        super().__init__(url, workspace or DEFAULT_WORKSPACE)
        self.serial = serial

    def adb(self, *args: str) -> list[str]:
        """The adb argv for this device."""
        return ["adb", *(["-s", self.serial] if self.serial else []), *args]

    def _argv(self, command: str) -> list[str]:
        return self.adb("shell", command)

    def lost(self, done: Completed) -> str | None:
        text = done.stderr.lower()
        if any(marker in text for marker in LOST) and ("error" in text or "adb:" in text):
            return last_line(done.stderr)
        return None

    def put(self, local: Path, remote: str, timeout: float) -> None:
        """mkdir -p of every directory, then one ``adb push FILE... DIR/`` per directory."""
        dirs = sorted({p.parent for p in local.rglob("*") if p.is_file()} | {local})
        targets = [remote if d == local else f"{remote}/{d.relative_to(local).as_posix()}" for d in dirs]
        what = f"creating {remote}"
        self.check(self.run("mkdir -p " + " ".join(quote(t) for t in targets), timeout, what), what)
        for d, target in zip(dirs, targets):
            files = sorted(str(p) for p in d.iterdir() if p.is_file())
            if files:
                what = f"pushing {len(files)} file(s) to {target}"
                self.check(self._tool(self.adb("push", *files, target + "/"), timeout, what), what)

    def get(self, remote: str, local: Path, timeout: float) -> None:
        """``adb pull REMOTE LOCAL`` into a LOCAL that does not exist yet (so it receives REMOTE's files)."""
        local.parent.mkdir(parents=True, exist_ok=True)
        what = f"pulling {remote}"
        self.check(self._tool(self.adb("pull", remote, str(local)), timeout, what), what)
