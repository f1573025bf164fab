"""ExecuTorch's quantized kernels are loaded in one place, ``sample_quantization.load_quantized_kernels``: the
quantize step calls it, and so does a process that runs quantized programs it did not quantize (the lowering
cache gave them back). Before it had one owner it was imported in six places, and a path that lacked it (a
cached program) failed with "Missing operator: quantized_decomposed::dequantize_per_tensor.out"."""

from __future__ import annotations

import ast
from pathlib import Path

from project_trees import ROOT, python_modules

OWNER = ROOT / "conformance" / "vendor" / "sample_quantization.py"
MODULE = "executorch.kernels.quantized"
#: module -> why it imports the kernels itself
ALLOWED = {
    "conformance/reproduce/script.py": (
        "the text of a standalone reproducer, which must run without the suite installed"
    ),
}


def imports(path: Path) -> list[int]:
    """Lines of ``path`` importing ``MODULE`` (``import`` or ``from ... import``)."""

    def loads(node: ast.AST) -> bool:
        if isinstance(node, ast.Import):
            return any(a.name == MODULE for a in node.names)
        if isinstance(node, ast.ImportFrom):
            return node.module == MODULE or (
                node.module == "executorch.kernels" and any(a.name == "quantized" for a in node.names)
            )
        return False

    return [node.lineno for node in ast.walk(ast.parse(path.read_bytes(), str(path))) if loads(node)]


def test_only_the_owner_loads_the_quantized_kernels():
    assert imports(OWNER), "the owner must be found by the scan, or the scan finds nothing"
    copies = {
        rel: lines
        for p in python_modules("conformance", "scoreboard")
        if p != OWNER and (rel := p.relative_to(ROOT).as_posix()) not in ALLOWED and (lines := imports(p))
    }
    assert copies == {}, f"call conformance.vendor.sample_quantization.load_quantized_kernels(): {copies}"
