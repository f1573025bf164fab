"""A module that is not installed, met while the vendor's code is imported: the message names the file
that imported it, its distribution, and whether that distribution declares it (conformance.vendor.import_hints).

The real case: executorch 1.5.1's ``executorch.backends.openvino`` imports ``nncf``, which neither
executorch's requirements nor its ``openvino`` extra declare. Each test runs in a real venv that has
every package of this one but the one left out (links to them, added by a .pth)."""

from __future__ import annotations

import importlib.util
import os
import re
import site
import subprocess
import sys
from pathlib import Path

import pytest

needs_openvino = pytest.mark.skipif(
    importlib.util.find_spec("openvino") is None or importlib.util.find_spec("nncf") is None,
    reason="the scoreboard extra (openvino, nncf) is not installed: pip install -e '.[scoreboard]'",
)

BASE_SITE = Path(site.getsitepackages()[0])


def _without(tmp_path: Path, *hidden: str) -> Path:
    """The python of a venv that has every package of this one but ``hidden``: its site directory is a
    directory of links to this venv's site-packages entries, added by a .pth (site.addsitedir)."""
    farm = tmp_path / "site-without"
    farm.mkdir()
    for entry in BASE_SITE.iterdir():
        top = re.split(r"[-.]", entry.name)[0].lower()
        if top not in hidden and entry.name != "__pycache__":
            (farm / entry.name).symlink_to(entry)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    (thin,) = (venv / "lib").glob("python3.*/site-packages")
    (thin / "base.pth").write_text(f"import site; site.addsitedir({str(farm)!r})\n")
    return venv / "bin" / "python"


def _hint_of(tmp_path: Path, hidden: str, statement: str) -> str:
    python = _without(tmp_path, hidden)
    script = tmp_path / "probe.py"
    script.write_text(
        "from conformance.vendor.import_hints import hint\n"
        f"try:\n    {statement}\nexcept ImportError as exc:\n    print(hint(exc))\nelse:\n    print('imported')\n"
    )
    proc = subprocess.run([str(python), str(script)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip().splitlines()[-1]


@needs_openvino
def test_nncf_is_named_as_an_undeclared_dependency_of_executorch(tmp_path):
    found = _hint_of(tmp_path, "nncf", "import executorch.backends.openvino")
    assert re.search(
        r"executorch/backends/openvino/quantizer/llm_compression.py:\d+ \(executorch 1\.5\.1\) imports 'nncf', "
        r"which no requirement of executorch declares \(an undeclared dependency",
        found,
    ), found
    assert "pip install nncf" in found


@needs_openvino
def test_openvino_is_named_as_declared_only_in_an_extra(tmp_path):
    found = _hint_of(tmp_path, "openvino", "import executorch.backends.openvino")
    assert re.search(
        r"executorch/backends/openvino/(partitioner|preprocess).py:\d+ \(executorch 1\.5\.1\) imports 'openvino', which "
        r"executorch declares only in an extra: pip install 'executorch\[openvino\]'",
        found,
    ), found


def test_a_file_of_no_distribution_names_the_module_to_install(tmp_path):
    from conformance.vendor.import_hints import hint

    (tmp_path / "loose_vendor.py").write_text("import conformance_absent_dependency\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import loose_vendor  # noqa: F401
    except ImportError as exc:
        found = hint(exc)
    finally:
        sys.path.remove(str(tmp_path))
    assert re.search(
        r"loose_vendor.py:1 imports 'conformance_absent_dependency', which is not installed "
        r"\(pip install conformance_absent_dependency\)",
        found,
    ), found


def test_other_errors_get_no_hint():
    from conformance.vendor.import_hints import hint

    assert hint(ValueError("no")) is None
    assert hint(ImportError("cannot import name 'x' from 'y'")) is None


@pytest.mark.full
@needs_openvino
def test_the_suite_reports_the_hint_for_a_descriptor_that_cannot_import(tmp_path):
    python = _without(tmp_path, "nncf")
    (tmp_path / "hides_nncf.py").write_text(
        "import executorch.backends.openvino\nfrom scoreboard.openvino.descriptor import DESCRIPTOR\n"
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    proc = subprocess.run(
        [str(python), "-m", "conformance.cli", "run", "--backend", "hides_nncf:DESCRIPTOR"]
        + ["--checks", "RT-1", "--report-dir", str(tmp_path / "report")],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "cannot import 'hides_nncf'" in output, output[-2000:]
    assert "imports 'nncf', which no requirement of executorch declares" in output, output[-2000:]
    assert "Traceback" not in output
