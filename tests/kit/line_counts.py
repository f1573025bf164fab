"""Lines of code of the backend template and the XNNPACK adapter, as
docs/out-of-tree-guide.md states them (tests/kit/test_line_counts.py holds the
guide to these numbers). A line of code is a line that is neither blank nor
only a comment; Python docstrings do not count either.

    python tests/kit/line_counts.py      # prints the figures
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "kit" / "backend_kit" / "template"
ADAPTER = ROOT / "scoreboard" / "xnnpack_adapter"


def python_lines(path: Path) -> int:
    """Lines holding a Python token that is not a comment or part of a docstring."""
    text = path.read_text()
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                docstrings.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    skip = {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENDMARKER,
    }
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in skip:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - docstrings)


def cpp_lines(path: Path) -> int:
    """Lines of C++ outside // and /* */ comments."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), path.read_text(), flags=re.DOTALL)
    return sum(1 for line in text.splitlines() if line.split("//", 1)[0].strip())


def cmake_lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.split("#", 1)[0].strip())


def count(paths: list[Path], how) -> int:
    return sum(how(p) for p in paths)


def figures() -> dict[str, int]:
    """The figures the guide states, by name."""
    template_py = sorted(TEMPLATE.rglob("*.py"))
    adapter_py = ADAPTER / "python" / "xnnpack_adapter"
    return {
        "template files": sum(1 for p in TEMPLATE.rglob("*") if p.is_file() and "__pycache__" not in p.parts),
        "template Python": count([p for p in template_py if "tests" not in p.parts], python_lines),
        "template tests": count([p for p in template_py if "tests" in p.parts], python_lines),
        "template C++": cpp_lines(TEMPLATE / "runtime" / "backend.cpp"),
        "template CMake": cmake_lines(TEMPLATE / "runtime" / "CMakeLists.txt"),
        "adapter Python": count([adapter_py / "__init__.py", adapter_py / "version.py"], python_lines),
        "adapter descriptor": python_lines(adapter_py / "conformance.py"),
        "adapter C++": cpp_lines(ADAPTER / "runtime" / "adapter.cpp"),
        "adapter CMake": cmake_lines(ADAPTER / "runtime" / "CMakeLists.txt"),
    }


if __name__ == "__main__":
    for name, value in figures().items():
        print(f"{name:20} {value}")
