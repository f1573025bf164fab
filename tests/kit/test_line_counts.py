"""docs/out-of-tree-guide.md states the size of the template and of the XNNPACK
adapter in lines of code; these are the files' real counts (tests/kit/line_counts.py)."""

from __future__ import annotations

import pytest
from line_counts import ROOT, figures

GUIDE = ROOT / "docs" / "out-of-tree-guide.md"

#: The guide's table row (by how it starts) -> the figure in its last cell.
ROWS = {
    "| Python (7 modules": "template Python",
    "| C++ runtime, `kit/backend_kit/template/": "template C++",
    "| CMake, `kit/backend_kit/template/": "template CMake",
    "| tests |": "template tests",
    "| Python, `scoreboard/xnnpack_adapter/": "adapter Python",
    "| C++, `scoreboard/xnnpack_adapter/": "adapter C++",
    "| CMake, `scoreboard/xnnpack_adapter/": "adapter CMake",
    "| descriptor, `scoreboard/xnnpack_adapter/": "adapter descriptor",
}


@pytest.mark.parametrize(("row", "figure"), ROWS.items())
def test_the_guide_states_the_real_line_count(row, figure):
    (line,) = [line for line in GUIDE.read_text().splitlines() if line.startswith(row)]
    stated = int(line.rstrip(" |").rsplit("|", 1)[1])
    assert stated == figures()[figure], (
        f"the guide says {stated} for {figure}; the files have {figures()[figure]}"
    )


def test_the_guide_states_the_number_of_files_written():
    assert f"wrote {figures()['template files']} files of acme-npu-backend" in GUIDE.read_text()


def test_the_counter_skips_comments_blank_lines_and_docstrings(tmp_path):
    from line_counts import cmake_lines, cpp_lines, python_lines

    py = tmp_path / "m.py"
    py.write_text(
        '"""Doc\nstring."""\n\n# comment\nx = (\n    1,\n)  # trailing\n\n\ndef f():\n    """Doc."""\n    return x\n'
    )
    cpp = tmp_path / "m.cpp"
    cpp.write_text("// c\n/* block\n   comment */\nint x = 1;  // trailing\n\n#include <a.h>\n")
    cmake = tmp_path / "CMakeLists.txt"
    cmake.write_text("# c\nproject(x)\n\nadd_library(y a.cpp)  # t\n")
    assert (python_lines(py), cpp_lines(cpp), cmake_lines(cmake)) == (5, 2, 2)
