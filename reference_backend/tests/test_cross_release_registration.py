"""reference_backend_register() in a process that runs another ExecuTorch
minor release refuses (NotSupported), for real: the library built here
against executorch 1.5.1 is loaded into a Python of executorch 1.4.1, whose
runtime lives hidden inside its Python extension, so the library would bind
to a second, private runtime (1.5.1's libexecutorch.so) and register there.

The 1.4.1 venv is made once (about 140 s and 1.5 GB with the local package
mirror; .ci/run makes it):

    python3.11 -m abi_checks.tools.release_venv 1.4.1   # build/abi-work/venv-1.4.1
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import reference_backend
from reference_backend.runtime import library_path

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / "build" / "abi-work" / "venv-1.4.1"
MAKE_VENV = "python3.11 -m abi_checks.tools.release_venv 1.4.1"

CHILD = """
import ctypes, sys
import executorch.runtime
from executorch.version import __version__
lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)  # the static initializer tries first
lib.reference_backend_register.restype = ctypes.c_int
code = lib.reference_backend_register()
names = list(executorch.runtime.Runtime.get().backend_registry.registered_backend_names)
print("RESULT", __version__, code, "ReferenceBackend" in names)
"""


def _run(python: Path, library: Path) -> tuple[list[str], str]:
    proc = subprocess.run(
        [str(python), "-c", CHILD, str(library)], capture_output=True, text=True, timeout=300, cwd="/"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (line,) = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    return line.split()[1:], proc.stderr


def test_registration_refuses_a_process_of_another_minor_release():
    python = VENV / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no executorch 1.4.1 venv; create it with: {MAKE_VENV}")
    (version, code, registered), log = _run(python, library_path())
    assert version.startswith("1.4.1")
    assert (int(code), registered) == (0x10, "False")  # Error::NotSupported, not in the 1.4.1 registry
    assert (
        "ReferenceBackend: not registering: built for executorch 1.5.1, this process runs executorch 1.4.1"
    ) in log
    assert "_portable_lib" in log  # names the library holding the process's runtime


def test_registration_accepts_the_release_it_was_built_for():
    import sys

    (version, code, registered), _ = _run(Path(sys.executable), library_path())
    assert version.startswith(reference_backend.runtime_info()["executorch_version"].rsplit(".", 1)[0])
    assert (int(code), registered) == (0, "True")
