"""``executorch-conformance run --vendor-python PATH`` (conformance/vendor/interpreter.py): every vendor
process runs the vendor's interpreter, with its environment and start-up code, while the command and its
judge run the suite's environment, which need not hold the backend; a PATH that cannot serve is refused
before anything starts, naming what is wrong.

The vendor's environment is a real venv of the same Python: a directory line of a .pth layers it on this
one (where torch, executorch and the reference backend are installed), another adds a directory holding a
backend module that only this environment has, and a third .pth is start-up code that records the process
it runs in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conformance.cli import EXIT_DESCRIPTOR, EXIT_USAGE, main
from conformance.vendor.interpreter import ANSWER_MARK, VendorPythonError, probe

REPO = Path(__file__).resolve().parents[2]
#: The backend module only the vendor's environment has (it re-exports the reference backend's descriptor).
VENDOR_MODULE = "vendor_only_backend"


def _venv(root: Path, *pth: str) -> Path:
    """A venv of this Python at ``root`` (no pip) with the given .pth files (name=text); its python."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(root)], check=True, timeout=300)
    python = root / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout.strip()
    for item in pth:
        name, text = item.split("=", 1)
        (Path(purelib) / name).write_text(text + "\n")
    return python


@pytest.fixture(scope="module")
def vendor_env(tmp_path_factory) -> tuple[Path, Path]:
    """(the vendor's python, the file its start-up code appends 'pid executable' lines to)."""
    root = tmp_path_factory.mktemp("vendor-env")
    packages = root / "packages"
    packages.mkdir()
    (packages / f"{VENDOR_MODULE}.py").write_text("from reference_backend.conformance import DESCRIPTOR\n")
    marker = root / "started.txt"
    python = _venv(
        root / "venv",
        f"suite-env.pth={sysconfig.get_paths()['purelib']}",
        f"vendor-packages.pth={packages}",
        "zz-startup.pth=import os, sys; open("
        + repr(str(marker))
        + ", 'a').write(f'{os.getpid()} {sys.executable}\\n')",
    )
    marker.unlink(missing_ok=True)  # the venv's own set-up ran python too
    return python, marker


def _command(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the backend module must stay unseen
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=900,
    )


@pytest.mark.full  # two whole runs (30 s): CI keeps it (tests/long_tier.py)
def test_the_vendor_side_runs_the_vendors_python_and_only_there(tmp_path, vendor_env):
    python, marker = vendor_env
    # the suite's environment cannot import the backend: without --vendor-python the backend is not found
    without = _command(
        "--backend", f"{VENDOR_MODULE}:DESCRIPTOR", "--checks", "AOT-1", "--report-dir", str(tmp_path / "a")
    )
    assert without.returncode == EXIT_DESCRIPTOR, without.stdout + without.stderr
    assert VENDOR_MODULE in without.stderr
    marker.unlink(missing_ok=True)

    report_dir = tmp_path / "b"
    done = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "run",
            "--vendor-python",
            str(python),
            "--backend",
            f"{VENDOR_MODULE}:DESCRIPTOR",
            "--checks",
            "AOT-1,RT-3",
            "--report-dir",
            str(report_dir),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        cwd=REPO,
    )
    output, _ = done.communicate(timeout=900)
    assert done.returncode == 0, output
    report = json.loads((report_dir / "report.json").read_text())
    assert {r["id"]: r["outcome"] for r in report["results"]} == {"AOT-1": "passed", "RT-3": "passed"}
    recorded = report["environment"]["vendor_python"]
    assert recorded["path"] == str(python) and recorded["python"] == ".".join(map(str, sys.version_info[:3]))
    assert recorded["executorch"] == report["environment"]["executorch"]
    # the vendor's start-up code ran in the vendor processes (the probe, the one that described the
    # backend, the run's), each the vendor's python, and never in the process that judged
    started = [line.split(" ", 1) for line in marker.read_text().splitlines()]
    assert len({pid for pid, _ in started}) >= 2, started
    assert {executable for _, executable in started} == {str(python)}, started
    assert str(done.pid) not in {pid for pid, _ in started}, (done.pid, started)


def _fake_python(path: Path, answer: dict) -> Path:
    """An executable that answers the probe as a Python interpreter of another release would."""
    path.write_text(f"#!/bin/sh\necho 'some start-up chatter'\necho '{ANSWER_MARK}{json.dumps(answer)}'\n")
    path.chmod(0o755)
    return path


#: Each interpreter that cannot serve, and what the refusal must say.
REFUSALS = {
    "missing": r"/missing does not exist: give the python of the vendor's environment",
    "directory": r"/directory is not an executable file",
    "not_executable": r"/not_executable is not an executable file",
    "true": r"is not a Python interpreter that answers \(exit status 0",
    "fails": r"is not a Python interpreter that answers \(exit status 3; it said: broken start",
    "python312": r"is Python 3\.12\.1, the suite runs on Python 3\.\d+: .*make the vendor's environment",
    "bare_venv": r"has no executorch and no torch installed",
}


@pytest.mark.parametrize("given", list(REFUSALS))
def test_an_interpreter_that_cannot_serve_is_refused_before_anything_starts(tmp_path, capsys, given):
    message = REFUSALS[given]
    paths = {
        "missing": lambda: tmp_path / "missing",
        "directory": lambda: (tmp_path / "directory").mkdir() or tmp_path / "directory",
        "not_executable": lambda: (
            (tmp_path / "not_executable").write_text("#!/bin/sh\n") and tmp_path / "not_executable"
        ),
        "true": lambda: Path("/bin/true"),
        "fails": lambda: _script(tmp_path / "fails", "echo broken start >&2; exit 3"),
        "python312": lambda: _fake_python(
            tmp_path / "python312",
            {
                "version": [3, 12, 1],
                "executable": "/x/python3.12",
                "sys_path": [],
                "executorch": "1.5.1",
                "torch": "2.13.0",
            },
        ),
        "bare_venv": lambda: _venv(tmp_path / "bare"),
    }
    path = paths[given]()
    code = main(
        [
            "run",
            "--vendor-python",
            str(path),
            "--backend",
            "ReferenceBackend",
            "--report-dir",
            str(tmp_path / "r"),
        ]
    )
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert err.startswith("executorch-conformance run: --vendor-python: "), err
    assert __import__("re").search(message, err), err
    assert not (tmp_path / "r" / "report.json").exists()


def _script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_a_start_up_that_hangs_is_refused_after_the_timeout(tmp_path):
    """A .pth that never returns (a real hang, not a slow start): the probe gives up and says what to suspect."""
    python = _venv(tmp_path / "venv", "hang.pth=import time; time.sleep(10**6)")
    with pytest.raises(VendorPythonError, match=r"did not start and answer within 3 s \(does start-up code"):
        probe(str(python), timeout=3)


def test_the_probe_runs_with_the_vendors_variables(tmp_path, vendor_env):
    """In the judge, whose own environment lacks PYTHONPATH, the probe is given the vendor's variables: the
    import path it reports (and the vendor processes get) holds the vendor's PYTHONPATH."""
    python, _ = vendor_env
    extra = tmp_path / "on-pythonpath"
    extra.mkdir()
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    assert str(extra) not in probe(str(python), environ=environ).sys_path
    found = probe(str(python), environ={**environ, "PYTHONPATH": str(extra)})
    assert found.sys_path[0] == str(extra), found.sys_path
    assert found.executorch and found.torch
