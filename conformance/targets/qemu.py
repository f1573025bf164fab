"""``--target qemu-<arch>[:///workspace]``: the runner, built for another
instruction set, runs on this host under QEMU's user-mode emulator
(``qemu-aarch64``, Debian's ``qemu-user``), in a workspace on this host.

The files are copied as for ``--target local``; only the runner's start
differs: ``qemu-<arch> -L <sysroot> conformance_runner ...``. The sysroot is
where the emulated program's dynamic loader, libc and libstdc++ are:
``QEMU_LD_PREFIX`` if set, else Debian's cross-toolchain layout
``/usr/<triple>`` (``/usr/aarch64-linux-gnu`` from ``g++-aarch64-linux-gnu``).
QEMU passes the environment to the emulated program, so ``LD_LIBRARY_PATH``
reaches its dynamic loader as on a device.

What emulation does not show (docs/device-runner.md): timing (QEMU translates
the target's code, so a check runs many times slower than on hardware and a
timeout means little), memory (the program shares this host's memory and page
size, and QEMU's own use is added), and a device's kernel, drivers or
accelerators: it tests the runner and the backend's code for that instruction
set and ABI, nothing below them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from conformance.targets.local import LocalTransport
from conformance.targets.transport import TargetError, quote

#: Debian's cross-toolchain triple per emulated machine: its sysroot is /usr/<triple>.
TRIPLES = {
    "aarch64": "aarch64-linux-gnu",
    "arm": "arm-linux-gnueabihf",
    "riscv64": "riscv64-linux-gnu",
    "ppc64le": "powerpc64le-linux-gnu",
    "s390x": "s390x-linux-gnu",
}
#: Where the emulated program's dynamic loader and libraries are (QEMU's own variable).
SYSROOT_ENV = "QEMU_LD_PREFIX"
#: What ``qemu-<arch>`` accepts as the machine name in a URL.
ARCH = re.compile(r"^[a-z][a-z0-9_]*$")


def parse(url: str) -> tuple[str, str | None]:
    """(machine, workspace or None) of a ``qemu-<arch>[:///workspace]`` URL; TargetError if malformed."""
    head, _, rest = url.partition(":")
    arch = head[len("qemu-") :]
    if not ARCH.match(arch):
        raise TargetError(f"--target {url!r} names no machine: give qemu-<arch>, e.g. qemu-aarch64")
    if rest and not rest.startswith("///"):
        raise TargetError(
            f"--target {url!r}: the workspace is a directory of this host, given as qemu-{arch}:///path"
        )
    workspace = rest[2:].rstrip("/") if rest else ""
    return arch, workspace or None


class QemuTransport(LocalTransport):
    """A local workspace whose runner starts under ``qemu-<arch>``."""

    scheme = "qemu"

    def __init__(self, url: str, machine: str, workspace: str | None) -> None:
        emulator = shutil.which(f"qemu-{machine}")
        if emulator is None:
            raise TargetError(
                f"--target {url}: qemu-{machine} is not installed on this host; install QEMU's user-mode "
                f"emulators (Debian: apt-get install qemu-user)"
            )
        sysroot = self._sysroot(url, machine)
        if workspace is not None:
            Path(workspace).mkdir(parents=True, exist_ok=True)
        super().__init__(url, workspace)
        self.machine = machine
        self.emulator = emulator
        self.sysroot = sysroot

    @staticmethod
    def _sysroot(url: str, machine: str) -> str:
        triple = TRIPLES.get(machine)
        given = os.environ.get(SYSROOT_ENV)
        if given:
            root, how = given, f"{SYSROOT_ENV}={given}"
        elif triple:
            root, how = f"/usr/{triple}", f"the {machine} libraries of Debian's cross compiler"
        else:
            raise TargetError(
                f"--target {url}: no sysroot is known for {machine}; set {SYSROOT_ENV} to the directory "
                f"holding its dynamic loader and libraries (lib/, usr/lib/)"
            )
        if not (Path(root) / "lib").is_dir():
            install = f" (Debian: apt-get install g++-{triple})" if triple and not given else ""
            raise TargetError(
                f"--target {url}: no {machine} sysroot at {root} ({how}): the emulated runner needs its "
                f"dynamic loader, libc and libstdc++ there{install}"
            )
        return root

    def launch(self, binary: str) -> str:
        return f"{quote(self.emulator)} -L {quote(self.sysroot)} {quote(binary)}"

    def details(self) -> dict[str, str]:
        """The emulator (its ``--version`` line) and the sysroot, for the report's target section."""
        try:
            done = subprocess.run([self.emulator, "--version"], capture_output=True, text=True, timeout=30)
            version = done.stdout.strip().splitlines()[0] if done.stdout.strip() else self.emulator
        except (OSError, subprocess.TimeoutExpired):
            version = self.emulator
        return {"emulator": version, "sysroot": self.sysroot}
