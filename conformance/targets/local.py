"""``--target local``: the runner runs as a subprocess on this host, in a
workspace directory of its own; copying is copying files."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from conformance.targets.transport import TargetError, Transport, disk_full


class LocalTransport(Transport):
    scheme = "local"

    def __init__(self, url: str = "local", workspace: str | None = None) -> None:
        self._temp = None
        if workspace is None:
            self._temp = tempfile.TemporaryDirectory(prefix="conformance-target-")
            workspace = self._temp.name
        super().__init__(url, workspace)

    def _argv(self, command: str) -> list[str]:
        return ["sh", "-c", command]

    def _copy(self, source: Path, dest: Path, what: str) -> None:
        try:
            shutil.copytree(source, dest, dirs_exist_ok=True)
        except (OSError, shutil.Error) as exc:
            text = str(exc)
            if disk_full(text) or getattr(exc, "errno", None) == 28:
                raise TargetError(f"the disk of {self.url} is full while {what}: {text}") from None
            raise TargetError(f"{what} failed: {text}") from None

    def put(self, local: Path, remote: str, timeout: float) -> None:
        self._copy(local, Path(remote), f"copying {local} to {remote}")

    def get(self, remote: str, local: Path, timeout: float) -> None:
        if not Path(remote).is_dir():
            raise TargetError(f"{remote} is not on {self.url} (the runner wrote no results)")
        self._copy(Path(remote), local, f"copying {remote} back")

    def close(self) -> None:
        if self._temp is not None:
            self._temp.cleanup()
            self._temp = None
