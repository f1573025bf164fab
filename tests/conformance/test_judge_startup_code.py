"""No start-up code of the vendor's environment runs in the judging process (conformance/judge/start.py;
docs/contract.md, "The judging process and the vendor's environment").

A real wheel that ships a ``.pth`` (as many packages do) is built here and installed with pip into an
environment of its own, layered on this one by a ``.pth`` of directory lines (``site.addsitedir``
semantics: the suite and its dependencies are found through it). Its start-up module records where it
ran and replaces the suite's verdict function. ``executorch-conformance run`` in that environment: the
module ran in the vendor process, never in the judge (it records the exit of every process it is alive
in, and the process that judges exits; the one it re-executed from never does), and the verdict is the
suite's own."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from test_judge_environment import PROBE, _vendor_side

# The full tier (CI; bash scripts/test.sh --full): builds a layered environment and runs the suite in it
pytestmark = pytest.mark.full

REPO = Path(__file__).resolve().parents[2]


def _wheel(out: Path) -> Path:
    """vendor_startup-1.0-py3-none-any.whl: vendor_startup.py and vendor_startup.pth ('import ...')."""
    files = {
        "vendor_startup.py": f"VAR = 'vendor_startup.pth'\n{PROBE}".encode(),
        "vendor_startup.pth": b"import vendor_startup\n",
        "vendor_startup-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: vendor-startup\nVersion: 1.0\n",
        "vendor_startup-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = [
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
        for name, data in files.items()
    ]
    files["vendor_startup-1.0.dist-info/RECORD"] = (
        "\n".join(record) + "\nvendor_startup-1.0.dist-info/RECORD,,\n"
    ).encode()
    wheel = out / "vendor_startup-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return wheel


@pytest.fixture(scope="module")
def layered(tmp_path_factory):
    """(python of an environment layered on this one, with the vendor's wheel installed; markers file)."""
    tmp = tmp_path_factory.mktemp("layered")
    env_dir = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=300)
    python = env_dir / "bin" / "python"
    site_dir = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout.strip()
    )
    # the layer: this environment's site directory and the suite's source tree, as directory lines
    (site_dir / "00-suite-layer.pth").write_text(
        f"{sysconfig.get_path('purelib')}\n{REPO}\n", encoding="utf-8"
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(site_dir),
            str(_wheel(tmp)),
        ],
        check=True,
        timeout=600,
    )
    assert (site_dir / "vendor_startup.pth").exists()
    return python, tmp / "markers.jsonl"


def test_a_wheel_s_pth_runs_in_the_vendor_process_but_not_in_the_judge(layered, tmp_path):
    python, markers = layered
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"))
    }
    env["PROBE_MARKERS"] = str(markers)
    proc = subprocess.run(
        [str(python), "-m", "conformance.cli", "run", "--backend", "ReferenceBackend", "--checks", "PKG-1"]
        + ["--report-dir", str(tmp_path / "report")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=1200,
    )
    assert (tmp_path / "report" / "report.json").exists(), proc.stdout + proc.stderr
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    entries = [json.loads(line) for line in markers.read_text().splitlines()]
    assert any(_vendor_side(e) for e in entries), f"the .pth never ran in the vendor process: {entries}"
    in_judge = [e for e in entries if e["event"] in ("exit", "verdict") and not _vendor_side(e)]
    assert not in_judge, f"the wheel's .pth was alive in the judging process: {in_judge}"
    assert report["verdict"] == "conformant" and proc.returncode == 0, proc.stdout + proc.stderr
