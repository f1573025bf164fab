"""``executorch-conformance docs``: every document the help and errors cite as docs/NAME.md is in the
package and readable from it; a wrong NAME is one line naming the documents there are. The full test
builds the suite's wheel and finds them, and the package description, in it."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.docs_command import DOCS_DIR, documents

ROOT = Path(__file__).resolve().parents[2]


def test_the_package_holds_every_document_of_docs():
    assert sorted(documents()) == sorted(p.stem for p in (ROOT / "docs").glob("*.md"))
    assert DOCS_DIR.parent == ROOT / "conformance"


def test_every_cited_document_exists():
    """docs/NAME.md in the suite's own code names a document the command can print."""
    cited = set()
    for path in (ROOT / "conformance").rglob("*.py"):
        cited |= set(re.findall(r"docs/([\w-]+)\.md", path.read_text(encoding="utf-8")))
    cited.discard("NAME")  # the placeholder of the help texts
    assert cited and cited <= set(documents()), sorted(cited - set(documents()))


@pytest.mark.parametrize("name", ["certification", "certification.md", "docs/certification.md"])
def test_a_document_is_printed_by_any_name_the_help_uses(capsys, name):
    assert main(["docs", name]) == 0
    assert capsys.readouterr().out == (ROOT / "docs" / "certification.md").read_text(encoding="utf-8")


def test_the_list_names_each_document_with_its_title(capsys):
    assert main(["docs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(documents())
    assert any(re.fullmatch(r"contract +The out-of-tree backend contract", line) for line in lines), lines


def test_a_wrong_name_is_one_line_and_exit_2(capsys):
    assert main(["docs", "nope"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(
        "executorch-conformance docs: no document 'nope'; the documents are: api-stability,"
    )


@pytest.mark.full  # builds the suite's wheel (about 30 s)
def test_the_wheel_carries_the_documents_and_describes_the_package(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = tmp_path.glob("executorch_conformance-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        description = archive.read(metadata).decode()
    shipped = {Path(n).stem for n in names if n.startswith("conformance/docs/") and n.endswith(".md")}
    assert shipped == set(documents())
    assert "conformance/device_runner/CMakeLists.txt" in names
    assert "executorch-conformance new-backend" in description
    assert "bash scripts/" not in description  # not the contributor README
